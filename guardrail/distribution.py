"""The distribution a shipped package belongs to: its name and version, found in the indexed tree.

A package that reads its own metadata at import (``__version__ = importlib.metadata.version(
__name__)``) cannot be loaded from its sources alone: nothing is installed in the sandbox.
`tree_distributions` finds the distribution's name and version where a source tree keeps them,
and the context ships them (``distributions`` in the payload) for the candidate's meta-path
finder to serve (`guardrail.sandbox.runner.distributions`).

Where it looks, first found per distribution name wins:

* in ``root`` (the sys.path folder) and, for a ``src`` layout (``root`` named ``src``), in the
  folder above it (the project's root, inside the indexed tree): an sdist's ``PKG-INFO``, then
  static ``name`` and ``version`` in ``pyproject.toml`` (``[project]``, or ``[tool.poetry]``),
  then ``[metadata]`` in ``setup.cfg``; a version that is computed at build time (``dynamic``,
  ``attr:``, ``file:``) is not known and not guessed;
* ``*.dist-info/METADATA`` and ``*.egg-info/PKG-INFO`` directly in those folders, for the
  distribution named like the top-level package or whose ``top_level.txt`` lists it.

Only regular files are read (no link is followed) and only a name and a version leave the
host, whatever else a file holds, so a hostile ``root`` learns nothing of a file's content.
"""

from __future__ import annotations

import configparser
import os
import re
import tomllib
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from guardrail.roots import trusted_root
from guardrail.tree import TreeFileError, read_in_tree

__all__ = ["MAX_DISTRIBUTIONS", "normalized", "tree_distributions"]

MAX_DISTRIBUTIONS = 16
_MAX_FILE_BYTES = 1 << 20
_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,198}[A-Za-z0-9])?\Z")
_VERSION = re.compile(r"[A-Za-z0-9][A-Za-z0-9.+!_-]{0,99}\Z")
_INSTALLED = ((".dist-info", "METADATA"), (".egg-info", "PKG-INFO"))


def normalized(name: str) -> str:
    """A distribution name as ``importlib.metadata`` compares it (PEP 503, underscores)."""
    return re.sub(r"[-_.]+", "_", name).lower()


def tree_distributions(root: Path, top: str) -> list[dict[str, str]]:
    """``[{"name", "version"}]`` of the distributions found for package ``top`` (see the module
    docstring); empty when the tree holds none. Never raises for an unreadable file."""
    # The folder above a src layout holds an sdist's PKG-INFO: read only when it is a context
    # root too (indexed with the package), never merely because it is above one.
    above = root.name == "src" and trusted_root(root.parent) is not None
    folders = [root] + ([root.parent] if above else [])
    found: dict[str, dict[str, str]] = {}
    for folder in folders:
        for entry in [*_project_metadata(folder), *_installed_metadata(folder, top)]:
            if len(found) < MAX_DISTRIBUTIONS:
                found.setdefault(normalized(entry["name"]), entry)
    return list(found.values())


def _project_metadata(folder: Path) -> list[dict[str, str]]:
    """The project's own distribution, from the first of its files that names one."""
    for read in (_from_pkg_info, _from_pyproject, _from_setup_cfg):
        entry = read(folder)
        if entry is not None:
            return [entry]
    return []


def _installed_metadata(folder: Path, top: str) -> list[dict[str, str]]:
    """Built metadata folders (``*.dist-info``, ``*.egg-info``) directly in ``folder``."""
    found: list[dict[str, str]] = []
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    for item in entries:
        for suffix, file in _INSTALLED:
            if not item.name.endswith(suffix) or not item.is_dir(follow_symlinks=False):
                continue
            entry = _from_pkg_info(Path(item.path), file)
            if entry is not None and _provides(Path(item.path), entry["name"], top):
                found.append(entry)
    return found


def _provides(folder: Path, name: str, top: str) -> bool:
    if normalized(name) == normalized(top):
        return True
    listed = _text(folder / "top_level.txt")
    return listed is not None and top in listed.split()


def _from_pkg_info(folder: Path, file: str = "PKG-INFO") -> dict[str, str] | None:
    text = _text(folder / file)
    if text is None:
        return None
    headers = HeaderParser().parsestr(text, headersonly=True)
    return _entry(headers.get("Name"), headers.get("Version"))


def _from_pyproject(folder: Path) -> dict[str, str] | None:
    text = _text(folder / "pyproject.toml")
    if text is None:
        return None
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    project = document.get("project")
    if isinstance(project, dict) and "version" not in (project.get("dynamic") or []):
        return _entry(project.get("name"), project.get("version"))
    tool = document.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    if isinstance(poetry, dict):
        return _entry(poetry.get("name"), poetry.get("version"))
    return None


def _from_setup_cfg(folder: Path) -> dict[str, str] | None:
    text = _text(folder / "setup.cfg")
    if text is None:
        return None
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    if not parser.has_section("metadata"):
        return None
    return _entry(
        parser.get("metadata", "name", fallback=None),
        parser.get("metadata", "version", fallback=None),
    )


def _entry(name: Any, version: Any) -> dict[str, str] | None:
    """A name and a static version, both well formed (``attr: pkg.v`` is not a version)."""
    if not (isinstance(name, str) and isinstance(version, str)):
        return None
    name, version = name.strip(), version.strip()
    if _NAME.match(name) and _VERSION.match(version):
        return {"name": name, "version": version}
    return None


def _text(path: Path) -> str | None:
    """A regular file's text (a link, a FIFO, a device or anything unreadable: None), read
    through `guardrail.tree` so that nothing is followed between the check and the read."""
    try:
        return read_in_tree(path.parent, path.name, max_bytes=_MAX_FILE_BYTES).decode("utf-8")
    except (TreeFileError, UnicodeDecodeError):
        return None
