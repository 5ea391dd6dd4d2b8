"""Reading an indexed tree, which is untrusted: nothing outside its root, nothing but regular files.

Every host-side reader of a code tree goes through this module: ``guardrail index`` and ``audit``
(`guardrail.index.splitter`, the docstrings one module copies from another), the module context
shipped with a candidate (`guardrail.context`) and the eval's pool builder. The rules:

* **The root is resolved once.** The caller's root (a path on the command line, a candidate's
  ``root``) is the boundary; when it is itself a symbolic link, its target is the root.
* **No symbolic link below the root is followed**, whether it points inside or outside the root:
  one rule with no resolution to race, and each file is indexed once, under its real path. Every
  component is opened relative to the folder before it with ``O_NOFOLLOW``, so a link swapped in
  between the check and the open is refused too, never followed.
* **Regular files only.** A FIFO, socket or device is refused from its ``lstat`` without being
  opened (a FIFO's ``open`` would block for ever, ``/dev/zero`` never ends); the file is opened
  with ``O_NONBLOCK`` and checked again on its descriptor, in case it was swapped.
* **Limits.** A file over ``max_bytes`` (`MAX_SOURCE_BYTES` by default) is refused before it is
  read, and never read past the limit if it grows; a walk enters at most `MAX_DEPTH` folders below
  the root. Relative names must be plain: no ``..``, no absolute path, no empty or ``.`` part.

Each refusal is a `TreeFileError` carrying a `TreeSkip` reason, so callers count what they
skipped, and why.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path, PurePosixPath

from guardrail.errors import InputError

__all__ = [
    "MAX_DEPTH",
    "MAX_SOURCE_BYTES",
    "DirChoice",
    "EntryKind",
    "TreeEntry",
    "TreeFileError",
    "TreeSkip",
    "entry_kind",
    "read_in_tree",
    "tree_root",
    "walk_tree",
]

MAX_SOURCE_BYTES = 1 << 20
"""Most bytes of one source file the index reads from a tree. Parsing costs the host up to ~500
bytes of memory a byte and ~2.5 s a MiB (a list of a million ``1,``): 1 MiB holds the largest
hand-written modules (pandas' ``frame.py`` is 430 KB) and keeps the worst case near 500 MB."""
MAX_DEPTH = 64
"""Most folders below the root a walk enters; deeper ones are skipped as `TreeSkip.TOO_DEEP`."""

_O_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_ROOT_FLAGS = os.O_RDONLY | os.O_DIRECTORY | _O_CLOEXEC
_DIR_FLAGS = _ROOT_FLAGS | os.O_NOFOLLOW
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | _O_CLOEXEC
_CHUNK = 1 << 16


class TreeSkip(StrEnum):
    """Why a file of a tree was not read: the words skip reports count."""

    SYMLINK = "symlink"
    NOT_REGULAR = "not_regular"  # a FIFO, socket or device node
    OUTSIDE_ROOT = "outside_root"  # a name that climbs out (``..``, absolute)
    TOO_LARGE = "too_large"
    TOO_DEEP = "too_deep"
    MISSING = "missing"
    UNREADABLE = "unreadable"


_WHY = {
    TreeSkip.SYMLINK: "a symbolic link (links in an indexed tree are never followed)",
    TreeSkip.NOT_REGULAR: "not a regular file (a FIFO, socket or device is never opened)",
    TreeSkip.OUTSIDE_ROOT: "a path that leaves the tree's root",
    TreeSkip.TOO_LARGE: "too large",
    TreeSkip.TOO_DEEP: f"nested more than {MAX_DEPTH} folders below the root",
    TreeSkip.MISSING: "no such file",
    TreeSkip.UNREADABLE: "cannot be read",
}


class TreeFileError(InputError):
    """A file of a tree that was not read: ``relative`` (posix, under the root), ``skip``."""

    def __init__(self, relative: str, skip: TreeSkip, detail: str = "") -> None:
        self.relative = relative
        self.skip = skip
        self.reason = _WHY[skip] + (f": {detail}" if detail else "")
        super().__init__(f"{relative}: {self.reason}")


class EntryKind(StrEnum):
    """What a name under a root is, seen without following it."""

    FILE = "file"
    DIR = "dir"
    SYMLINK = "symlink"
    OTHER = "other"


class DirChoice(StrEnum):
    """What `walk_tree` does with a folder: enter it, leave it out unseen, or enter it and mark
    every file in it ``excluded`` (so a caller can count what its filters left out)."""

    ENTER = "enter"
    PRUNE = "prune"
    EXCLUDE = "exclude"


@dataclass(frozen=True, slots=True)
class TreeEntry:
    """A file `walk_tree` found: ``relative`` (posix, under the root); ``skip`` when it cannot
    be read (a link, not a regular file, a folder too deep); ``excluded`` under an excluded folder.
    """

    relative: str
    skip: TreeFileError | None = None
    excluded: bool = False


def tree_root(root: str | Path) -> Path:
    """The real path of the folder ``root`` (a link given as the root is resolved, once).

    Raises:
        TreeFileError: ``root`` is no folder.
    """
    real = Path(os.path.realpath(root))
    if not real.is_dir():
        skip = TreeSkip.NOT_REGULAR if real.exists() else TreeSkip.MISSING
        raise TreeFileError(str(root), skip, "the root of a tree must be a folder")
    return real


def read_in_tree(
    root: str | Path, relative: str | PurePosixPath, *, max_bytes: int = MAX_SOURCE_BYTES
) -> bytes:
    """The bytes of the regular file ``relative`` under ``root``, with the module's rules.

    Raises:
        TreeFileError: the name leaves the root, a component is a link or no folder, the file is
            a link, not a regular file, over ``max_bytes``, missing or unreadable.
    """
    parts = _parts(relative)
    name = "/".join(parts)
    with _Folder.open_parent(root, parts) as folder:
        return folder.read(parts[-1], name, max_bytes)


def entry_kind(root: str | Path, relative: str | PurePosixPath) -> EntryKind | None:
    """What ``relative`` under ``root`` is, without following it; None when absent, or when a
    folder on the way is a link or the name leaves the root."""
    try:
        parts = _parts(relative)
        with _Folder.open_parent(root, parts) as folder:
            mode = os.stat(parts[-1], dir_fd=folder.fd, follow_symlinks=False).st_mode
    except (TreeFileError, OSError):
        return None
    if stat.S_ISREG(mode):
        return EntryKind.FILE
    if stat.S_ISDIR(mode):
        return EntryKind.DIR
    return EntryKind.SYMLINK if stat.S_ISLNK(mode) else EntryKind.OTHER


def walk_tree(
    root: str | Path,
    *,
    suffix: str,
    choose: Callable[[str], DirChoice],
    max_depth: int = MAX_DEPTH,
) -> Iterator[TreeEntry]:
    """Every file named ``*suffix`` under ``root``, in a stable order (a folder's files, sorted,
    then its folders, sorted), never following a link; ``choose(relative)`` decides each folder.

    Links (to anything, named anything), non-regular files named ``*suffix`` and folders over
    ``max_depth`` come back with their ``skip``; nothing is opened but folders.
    """
    top = os.open(root, _ROOT_FLAGS)
    try:
        yield from _Walk(suffix, choose, max_depth).folder(top, "", 0, excluded=False)
    finally:
        os.close(top)


@dataclass(frozen=True, slots=True)
class _Walk:
    suffix: str
    choose: Callable[[str], DirChoice]
    max_depth: int

    def folder(self, fd: int, prefix: str, depth: int, *, excluded: bool) -> Iterator[TreeEntry]:
        try:
            names = sorted(os.listdir(fd))
        except OSError as exc:
            where = prefix or "."
            yield TreeEntry(where, TreeFileError(where, TreeSkip.UNREADABLE, _os(exc)))
            return
        folders: list[tuple[str, bool]] = []
        for name in names:
            try:
                mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
            except OSError:
                continue  # gone since it was listed
            if stat.S_ISDIR(mode):
                choice = self.choose(prefix + name)
                if choice is not DirChoice.PRUNE:
                    folders.append((name, excluded or choice is DirChoice.EXCLUDE))
            elif (entry := self._file(prefix + name, mode, excluded=excluded)) is not None:
                yield entry
        for name, inside_excluded in folders:
            yield from self._enter(fd, name, prefix, depth, excluded=inside_excluded)

    def _file(self, relative: str, mode: int, *, excluded: bool) -> TreeEntry | None:
        if stat.S_ISLNK(mode):  # reported whatever its name: it may stand for a folder
            return (
                None if excluded else TreeEntry(relative, TreeFileError(relative, TreeSkip.SYMLINK))
            )
        if not relative.endswith(self.suffix):
            return None
        if excluded:
            return TreeEntry(relative, excluded=True) if stat.S_ISREG(mode) else None
        regular = stat.S_ISREG(mode)
        return TreeEntry(
            relative, None if regular else TreeFileError(relative, TreeSkip.NOT_REGULAR)
        )

    def _enter(
        self, fd: int, name: str, prefix: str, depth: int, *, excluded: bool
    ) -> Iterator[TreeEntry]:
        relative = f"{prefix}{name}/"
        if depth + 1 > self.max_depth:
            if not excluded:
                yield TreeEntry(relative, TreeFileError(relative, TreeSkip.TOO_DEEP))
            return
        try:
            child = _open_folder(fd, name, relative)
        except TreeFileError as exc:  # swapped for a link since its lstat, or unreadable
            yield TreeEntry(relative, exc)
            return
        try:
            yield from self.folder(child, relative, depth + 1, excluded=excluded)
        finally:
            os.close(child)


def _open_folder(fd: int, name: str, relative: str) -> int:
    """The folder ``name`` in the open folder ``fd``, opened without following a link."""
    try:
        mode = os.stat(name, dir_fd=fd, follow_symlinks=False).st_mode
        if not stat.S_ISLNK(mode) and stat.S_ISDIR(mode):
            return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except OSError as exc:
        raise _refusal(relative, exc) from None
    if stat.S_ISLNK(mode):
        raise TreeFileError(relative, TreeSkip.SYMLINK)
    raise TreeFileError(relative, TreeSkip.MISSING, "not a folder")


class _Folder:
    """An open folder descriptor under a root, reached without following any link."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    @classmethod
    def open_parent(cls, root: str | Path, parts: tuple[str, ...]) -> _Folder:
        try:
            fd = os.open(root, _ROOT_FLAGS)
        except OSError as exc:
            raise TreeFileError(".", TreeSkip.MISSING, f"the root {root}: {_os(exc)}") from None
        for index, part in enumerate(parts[:-1]):
            try:
                child = _open_folder(fd, part, "/".join(parts[: index + 1]))
            finally:
                os.close(fd)
            fd = child
        return cls(fd)

    def __enter__(self) -> _Folder:
        return self

    def __exit__(self, *_: object) -> None:
        os.close(self.fd)

    def read(self, name: str, relative: str, max_bytes: int) -> bytes:
        try:
            before = os.stat(name, dir_fd=self.fd, follow_symlinks=False)
        except OSError as exc:
            raise _refusal(relative, exc) from None
        _check_regular(relative, before, max_bytes)
        try:
            fd = os.open(name, _FILE_FLAGS, dir_fd=self.fd)
        except OSError as exc:
            raise _refusal(relative, exc) from None
        try:
            now = os.fstat(fd)
            if (now.st_dev, now.st_ino) != (before.st_dev, before.st_ino):
                raise TreeFileError(relative, TreeSkip.NOT_REGULAR, "it changed while opened")
            _check_regular(relative, now, max_bytes)
            return _read_capped(fd, relative, max_bytes)
        finally:
            os.close(fd)


def _check_regular(relative: str, status: os.stat_result, max_bytes: int) -> None:
    if stat.S_ISLNK(status.st_mode):
        raise TreeFileError(relative, TreeSkip.SYMLINK)
    if not stat.S_ISREG(status.st_mode):
        raise TreeFileError(relative, TreeSkip.NOT_REGULAR)
    if status.st_size > max_bytes:
        raise TreeFileError(
            relative, TreeSkip.TOO_LARGE, f"{status.st_size:,} bytes, the limit is {max_bytes:,}"
        )


def _read_capped(fd: int, relative: str, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while True:
        try:
            chunk = os.read(fd, min(_CHUNK, max_bytes + 1 - size))
        except OSError as exc:
            raise _refusal(relative, exc) from None
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        size += len(chunk)
        if size > max_bytes:
            raise TreeFileError(relative, TreeSkip.TOO_LARGE, f"over {max_bytes:,} bytes")


def _parts(relative: str | PurePosixPath) -> tuple[str, ...]:
    text = relative.as_posix() if isinstance(relative, PurePosixPath) else relative
    parts = tuple(text.split("/"))
    if (
        not text
        or "\x00" in text
        or text.startswith("/")
        or any(part in {"", ".", ".."} for part in parts)
    ):
        raise TreeFileError(repr(text), TreeSkip.OUTSIDE_ROOT)
    return parts


def _refusal(relative: str, exc: OSError) -> TreeFileError:
    if exc.errno == errno.ELOOP:
        return TreeFileError(relative, TreeSkip.SYMLINK)
    if exc.errno in {errno.ENOENT, errno.ENOTDIR}:
        return TreeFileError(relative, TreeSkip.MISSING)
    return TreeFileError(relative, TreeSkip.UNREADABLE, _os(exc))


def _os(exc: OSError) -> str:
    return exc.strerror or str(exc)
