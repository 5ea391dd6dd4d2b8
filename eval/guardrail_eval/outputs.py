"""Output files: atomic writes, and an ``--out`` folder that never mixes two runs.

`write_text_atomically` writes every file to a temporary sibling first and renames them all
into place only when all are written, so an error leaves no half-written file.

An eval's ``--out`` folder holds one run. `check_out_folder` decides, before anything runs,
whether a folder may take this run's outputs:

- missing or empty: yes;
- holding only an earlier run's own outputs (`OWN_OUTPUTS`: ``results/*.json``,
  ``summary.json``, ``report.*``, ``plots/*.png|svg|pdf``, and the temporaries an interrupted
  write left): only with ``force``; `replace_outputs` then writes the new files and removes
  every earlier one the run did not rewrite, so no stale result sits next to the new summary;
- holding anything else (a file or folder the eval does not write, a symbolic link in it):
  never, even with ``force``: the eval deletes only what it wrote.

Refusals are `OutFolderError` (bad input, exit 2), raised before any file is touched.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath

from guardrail_eval.errors import OutFolderError, OutputError

__all__ = [
    "OWN_OUTPUTS",
    "OutFolder",
    "check_out_folder",
    "replace_outputs",
    "write_text_atomically",
]

OWN_OUTPUTS = (
    "summary.json",
    "report.*",
    "results/*.json",
    "plots/*.png",
    "plots/*.svg",
    "plots/*.pdf",
)
"""What an eval writes into ``--out``, as globs relative to it (all that ``force`` may delete)."""

_OWN_FOLDERS = ("results", "plots")
_NAMED = 5  # paths an error message names before "and N more"


def write_text_atomically(files: Mapping[Path, str | bytes]) -> None:
    """Write each file to a temporary sibling, then rename them all into place.

    Text is written as UTF-8, bytes as they are. Nothing is renamed until every file has been
    written, so an error leaves no half-written file behind (the temporaries are removed).

    Raises:
        OutputError: a folder cannot be created or a file cannot be written.
    """
    written: list[tuple[Path, Path]] = []
    umask = os.umask(0)
    os.umask(umask)
    try:
        for path, content in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            data = content.encode("utf-8") if isinstance(content, str) else content
            with tempfile.NamedTemporaryFile(
                "wb", dir=path.parent, prefix=f".{path.name}.", delete=False
            ) as handle:
                written.append((Path(handle.name), path))
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
                # NamedTemporaryFile is 0600; the result should look like any file we write.
                os.chmod(handle.name, 0o666 & ~umask)
        for temporary, path in written:
            os.replace(temporary, path)
    except OSError as exc:
        for temporary, _ in written:
            temporary.unlink(missing_ok=True)
        target = exc.filename or next(iter(files), "")
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None


@dataclass(frozen=True)
class OutFolder:
    """An output folder found usable: where it is and the earlier outputs it holds.

    Attributes:
        path: the folder (it may not exist yet).
        earlier: an earlier run's own files in it, relative to ``path`` (empty unless forced).
    """

    path: Path
    earlier: tuple[PurePosixPath, ...]


def check_out_folder(path: Path, *, force: bool) -> OutFolder:
    """Whether ``path`` may take a run's outputs (see the module docstring).

    Raises:
        OutFolderError: ``path`` is a file; it holds anything the eval does not write; or it
            holds an earlier run's outputs and ``force`` is off.
    """
    if path.exists() and not path.is_dir():
        raise OutFolderError(
            f"--out {path} is a file; expected a folder (it is created when missing)",
            hint="choose a new or empty folder with --out",
        )
    if not path.exists():
        return OutFolder(path, ())
    own, unknown = _survey(path)
    if unknown:
        raise OutFolderError(
            f"--out {path} holds what guardrail eval does not write: {_name(unknown)}",
            hint="choose a new or empty folder with --out; --force never deletes such files"
            " (it replaces only an earlier run's summary.json, report.*, results/*.json, plots/)",
        )
    if own and not force:
        raise OutFolderError(
            f"--out {path} holds an earlier run's outputs: {_name(own)}",
            hint="pass --force to replace them (earlier files this run does not rewrite are"
            " removed), or choose a new folder with --out",
        )
    return OutFolder(path, tuple(own))


def replace_outputs(path: Path, files: Mapping[Path, str | bytes], *, force: bool) -> list[Path]:
    """Write ``files`` (paths under ``path``) atomically, then remove the earlier outputs.

    The folder is checked again first (it may have changed while the run ran). Earlier own
    files that this run does not rewrite are removed only after every new file is in place;
    own folders left empty are removed too.

    Raises:
        OutFolderError: the folder may not take the outputs (see `check_out_folder`).
        OutputError: a file cannot be written or an earlier one cannot be removed.
    """
    folder = check_out_folder(path, force=force)
    write_text_atomically(files)
    rewritten = {Path(written).resolve() for written in files}
    try:
        for relative in folder.earlier:
            stale = path / relative
            if stale.resolve() not in rewritten:
                stale.unlink(missing_ok=True)
        for name in _OWN_FOLDERS:
            own_folder = path / name
            if own_folder.is_dir() and not any(own_folder.iterdir()):
                own_folder.rmdir()
    except OSError as exc:
        raise OutputError(
            f"wrote the new outputs, but cannot remove the earlier {exc.filename}:"
            f" {exc.strerror or exc}"
        ) from None
    return list(files)


def _survey(path: Path) -> tuple[list[PurePosixPath], list[PurePosixPath]]:
    """The folder's entries (files, at most one level into own folders): own and unknown."""
    own: list[PurePosixPath] = []
    unknown: list[PurePosixPath] = []
    for entry in sorted(path.iterdir()):
        relative = PurePosixPath(entry.name)
        if entry.name in _OWN_FOLDERS and entry.is_dir() and not entry.is_symlink():
            for inner in sorted(entry.iterdir()):
                inner_relative = relative / inner.name
                mine = _is_own(inner_relative) and inner.is_file() and not inner.is_symlink()
                (own if mine else unknown).append(inner_relative)
        elif _is_own(relative) and entry.is_file() and not entry.is_symlink():
            own.append(relative)
        else:
            unknown.append(relative)
    return own, unknown


def _is_own(relative: PurePosixPath) -> bool:
    name = relative.name
    if name.startswith("."):
        # A temporary that an interrupted `write_text_atomically` left: ".<own name>.<random>".
        stem = name[1:].rsplit(".", 1)[0]
        return stem != name[1:] and _is_own(relative.with_name(stem))
    return any(fnmatchcase(str(relative), pattern) for pattern in OWN_OUTPUTS)


def _name(paths: list[PurePosixPath]) -> str:
    shown = ", ".join(str(path) for path in paths[:_NAMED])
    more = len(paths) - _NAMED
    return shown + (f" and {more} more" if more > 0 else "")
