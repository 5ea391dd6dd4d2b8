"""Context trees of a pool: each corpus entry's module context as a code tree of its own.

A pool of real code judges every snippet inside its module. If every snippet shared one copy of
the codebase, a mutant's text would be in no shipped file while its canonical's is, and "the one
whose text is in its module" would pick the correct code without running anything. So every
entry names the **tree** it lives in, a whole code tree whose module holds the entry's own text:
the canonicals and the codebase's other functions live in the codebase as it is, and each mutant
in a fork of it (the codebase with that one module changed, as a vendored copy would be).

Trees are stored content-addressed under ``<pool dir>/context/`` (`TreeStore`):

* ``objects/<sha256>``: each distinct file's bytes, once, named by their sha256;
* ``trees/<tree id>.json``: the tree's manifest ``{"files": {posix path: sha256}}`` (canonical
  JSON, sorted); the tree id is the sha256 of those bytes.

A fork thus costs one object (its changed module) and one small manifest; the same files give the
same ids on every machine. To be judged, a tree is materialized (`materialize`) as a real folder
under the guardrail cache (``pools/trees/<tree id>/``, its files hard links to verified copies of
the objects in ``pools/objects/``, plain copies where links cannot be made), once, atomically,
and its trees folder registered as a context root: `guardrail.context` then reads it like any
indexed tree (no link, regular files only, nothing outside it). Everything in a manifest is pool
data, as hostile as a candidate: paths must be plain relative ``.py`` paths, every object's bytes
must hash to its name, a manifest to its id; anything else is a `TreeError`, never a read
outside the pool.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from pathlib import Path, PurePosixPath

from guardrail.errors import InputError
from guardrail.roots import register_context_root
from guardrail.tree import MAX_SOURCE_BYTES, TreeFileError, read_in_tree

__all__ = [
    "OBJECTS_DIR",
    "TREES_DIR",
    "TreeError",
    "TreeStore",
    "is_tree_id",
    "materialize",
    "object_bytes",
    "tree_files",
]

OBJECTS_DIR = "objects"
TREES_DIR = "trees"

_SHA = re.compile(r"[0-9a-f]{64}")
_MAX_MANIFEST_BYTES = 4 << 20


class TreeError(InputError):
    """A context tree of a pool that cannot be had: a manifest or object missing, malformed or
    not matching its hash, or a path in it that is no plain relative ``.py`` path."""

    hint = "rebuild the pool (guardrail eval build-pool); its context/ folder is damaged"


def is_tree_id(value: str) -> bool:
    """Whether ``value`` has a tree id's shape (64 lowercase hex digits)."""
    return _SHA.fullmatch(value) is not None


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _manifest_bytes(files: dict[str, str]) -> bytes:
    return (json.dumps({"files": dict(sorted(files.items()))}, sort_keys=True) + "\n").encode()


def _plain_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return (
        bool(parts)
        and not PurePosixPath(path).is_absolute()
        and "\\" not in path
        and path.endswith(".py")
        and all(part not in {"", ".", ".."} and "\0" not in part for part in parts)
        and PurePosixPath(*parts).as_posix() == path
    )


class TreeStore:
    """Writes trees into a context folder being built; each object and manifest once."""

    def __init__(self, context_dir: Path) -> None:
        self.context_dir = context_dir
        self._written: set[str] = set()
        (context_dir / OBJECTS_DIR).mkdir(parents=True, exist_ok=True)
        (context_dir / TREES_DIR).mkdir(parents=True, exist_ok=True)

    def add(self, files: dict[str, bytes]) -> str:
        """Store the tree of ``files`` (posix path -> bytes) and return its id."""
        manifest: dict[str, str] = {}
        for path, data in files.items():
            if not _plain_path(path):
                raise TreeError(f"{path!r} is no plain relative path of a .py file")
            digest = _sha256(data)
            if digest not in self._written:
                (self.context_dir / OBJECTS_DIR / digest).write_bytes(data)
                self._written.add(digest)
            manifest[path] = digest
        raw = _manifest_bytes(manifest)
        tree_id = _sha256(raw)
        if tree_id not in self._written:
            (self.context_dir / TREES_DIR / f"{tree_id}.json").write_bytes(raw)
            self._written.add(tree_id)
        return tree_id


def tree_files(context_dir: Path, tree_id: str) -> dict[str, str]:
    """The manifest of tree ``tree_id`` in ``context_dir``: posix path -> object sha256.

    Raises:
        TreeError: no such tree, or a manifest that is malformed or does not hash to its id.
    """
    if not is_tree_id(tree_id):
        raise TreeError(f"{tree_id!r} is no tree id")
    where = f"{TREES_DIR}/{tree_id}.json"
    try:
        raw = read_in_tree(context_dir, where, max_bytes=_MAX_MANIFEST_BYTES)
    except TreeFileError as exc:
        raise TreeError(f"tree {tree_id[:12]}: {exc}") from None
    if _sha256(raw) != tree_id:
        raise TreeError(f"{where}: its bytes do not hash to its name")
    try:
        files = json.loads(raw)["files"]
    except (ValueError, KeyError, TypeError):
        raise TreeError(f"{where}: not a tree manifest") from None
    if not isinstance(files, dict) or not all(
        isinstance(p, str) and _plain_path(p) and isinstance(s, str) and is_tree_id(s)
        for p, s in files.items()
    ):
        raise TreeError(f"{where}: a path or object name in it is malformed")
    return files


def object_bytes(context_dir: Path, digest: str) -> bytes:
    """The bytes of object ``digest``, checked against it.

    Raises:
        TreeError: no such object, or its bytes do not hash to its name.
    """
    if not is_tree_id(digest):
        raise TreeError(f"{digest!r} is no object name")
    try:
        data = read_in_tree(context_dir, f"{OBJECTS_DIR}/{digest}", max_bytes=MAX_SOURCE_BYTES)
    except TreeFileError as exc:
        raise TreeError(f"object {digest[:12]}: {exc}") from None
    if _sha256(data) != digest:
        raise TreeError(f"{OBJECTS_DIR}/{digest}: its bytes do not hash to its name")
    return data


def materialize(context_dir: Path, tree_id: str, cache: Path) -> Path:
    """Tree ``tree_id`` of ``context_dir`` as a real folder under ``cache`` (in a context root).

    Made once (``cache/trees/<tree id>``, written in a temporary folder and renamed into place),
    then reused by every process: the id is the hash of its content. Returns the folder.

    Raises:
        TreeError: see `tree_files` and `object_bytes`.
    """
    target = cache / TREES_DIR / tree_id
    if target.is_dir():
        return _trusted(target)
    files = tree_files(context_dir, tree_id)
    objects = cache / OBJECTS_DIR
    objects.mkdir(parents=True, exist_ok=True)
    (cache / TREES_DIR).mkdir(parents=True, exist_ok=True)
    building = Path(tempfile.mkdtemp(prefix=f".{tree_id[:12]}-", dir=cache / TREES_DIR))
    try:
        for path, digest in files.items():
            kept = objects / digest
            if not kept.is_file():
                _write_atomically(kept, object_bytes(context_dir, digest))
            placed = building / path
            placed.parent.mkdir(parents=True, exist_ok=True)
            try:
                os.link(kept, placed)
            except OSError:  # another file system, or links not allowed: a copy
                shutil.copyfile(kept, placed)
        try:
            building.rename(target)
        except OSError:
            if not target.is_dir():  # not another process that made it first
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return _trusted(target)


def _trusted(tree: Path) -> Path:
    """``tree`` resolved, its trees folder a context root: one root for every materialized tree
    (each checked against its hashes when made), so checking a read stays cheap however many
    trees a pool has."""
    register_context_root(tree.parent)
    return tree.resolve()


def _write_atomically(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(prefix=".object-", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
