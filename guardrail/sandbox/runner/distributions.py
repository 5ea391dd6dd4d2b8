"""The shipped package's distribution metadata, for ``importlib.metadata`` in the candidate.

The host ships the name and version of the distributions the indexed tree declares
(`guardrail.distribution`, ``context["distributions"]``); `install` puts a meta-path finder
before the image's own that serves them, so ``importlib.metadata.version(__name__)`` in a
package's ``__init__`` answers as in the installed package. Only ``Name`` and ``Version`` are
known (``metadata()`` holds nothing else; ``files()`` and ``requires()`` are None).

A distribution neither shipped nor in the image raises ``PackageNotFoundError`` (a
``ModuleNotFoundError``): `missing_message` says what is missing, so that it is never taken for
a module of the package that was not shipped, nor for a failure of the code.
"""

from __future__ import annotations

import re
import sys
from typing import Any

_made: list[type] = []  # the Distribution class, made on first use (importlib.metadata is big)


def _normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "_", name).lower()


class ShippedDistributions:
    """A meta-path finder of distributions only (it finds no module)."""

    def __init__(self, entries: list[dict[str, str]]) -> None:
        self.entries = entries

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:
        return None

    def find_distributions(self, context: Any = None) -> list[Any]:
        """The shipped distributions ``context.name`` names (all when it names none)."""
        wanted = getattr(context, "name", None)
        chosen = [
            entry
            for entry in self.entries
            if not isinstance(wanted, str) or _normalized(wanted) == _normalized(entry["name"])
        ]
        return [_distribution_class()(entry) for entry in chosen]


def _distribution_class() -> type:
    if not _made:
        from importlib.metadata import Distribution
        from pathlib import PurePosixPath

        class Shipped(Distribution):
            def __init__(self, entry: dict[str, str]) -> None:
                self._text = (
                    f"Metadata-Version: 2.1\nName: {entry['name']}\nVersion: {entry['version']}\n"
                )

            def read_text(self, filename: str) -> str | None:
                return self._text if filename in ("METADATA", "PKG-INFO") else None

            def locate_file(self, path: Any) -> Any:
                return PurePosixPath(path)

        _made.append(Shipped)
    return _made[0]


def install(entries: Any) -> None:
    """Serve ``entries`` (``[{"name", "version"}]``, checked by the host) before the image's."""
    if type(entries) is list and entries:
        sys.meta_path.insert(0, ShippedDistributions(entries))


def missing_message(exc: BaseException) -> str | None:
    """What is missing, when ``exc`` is ``importlib.metadata``'s ``PackageNotFoundError``."""
    metadata = sys.modules.get("importlib.metadata")
    not_found = getattr(metadata, "PackageNotFoundError", None)
    if not (isinstance(not_found, type) and isinstance(exc, not_found)):
        return None
    name = getattr(exc, "name", None)
    return (
        f"the code reads the metadata of distribution {name!r} (importlib.metadata), which"
        " is neither in the sandbox image nor found in the indexed tree (an sdist's PKG-INFO,"
        " *.dist-info/METADATA, *.egg-info/PKG-INFO, or a static name and version in"
        " pyproject.toml or setup.cfg next to the package)"
    )
