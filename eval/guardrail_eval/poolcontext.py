"""Module context of a pool's snippets: where a corpus entry lives in the pool's ``context/``.

A pool built from real code (`guardrail_eval.realpool`) ships the source files its snippets need
under ``<pool dir>/context/``, and each corpus entry may carry ``context``: ``{"file", "module",
"qualified_name", "tree"}``. ``tree`` names the entry's own code tree (the codebase, or a fork of
it whose module holds the entry's text: `guardrail_eval.contexttrees`), materialized as a folder
that would be on ``sys.path``; without ``tree`` (pools built before trees) ``context/`` itself
is that folder. The eval passes it to the Gate as candidate metadata with ``root`` = that folder
(`candidate_metadata`), so the snippet is judged inside its module (`guardrail.context`), in the
gate call and in the ground truth alike; `module_text` is the module file the entry ships in.

``file`` must stay inside ``context/``: a relative posix path of ``.py`` file, no ``..``; the
loader refuses anything else (a pool is data, never a way to read the host's files).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, field_validator

from guardrail.cache import default_cache_path
from guardrail.roots import register_context_root
from guardrail.tree import EntryKind, entry_kind, read_in_tree
from guardrail_eval.contexttrees import (
    OBJECTS_DIR,
    TreeError,
    is_tree_id,
    materialize,
    object_bytes,
    tree_files,
)

if TYPE_CHECKING:
    from guardrail_eval.pool import CorpusEntry, Pool

__all__ = [
    "CONTEXT_DIR",
    "CorpusContext",
    "candidate_metadata",
    "context_root",
    "entry_root",
    "missing_context_file",
    "module_text",
    "shipped_module_text",
    "trees_cache",
]

CONTEXT_DIR = "context"
"""The folder beside ``data/`` that holds the source files of a pool's module contexts."""


class CorpusContext(BaseModel):
    """Where a corpus entry lives: ``file`` in its ``tree`` (or under ``context/``), its
    ``module``, its name in it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    module: str
    qualified_name: str = ""
    tree: str | None = None

    @field_validator("tree")
    @classmethod
    def _tree_id(cls, value: str | None) -> str | None:
        if value is not None and not is_tree_id(value):
            raise ValueError(f"{value!r} is not a tree id (64 lowercase hex digits)")
        return value

    @field_validator("file")
    @classmethod
    def _inside_context(cls, value: str) -> str:
        path = PurePosixPath(value)
        if path.is_absolute() or "\\" in value or ".." in path.parts or path.suffix != ".py":
            raise ValueError(
                f"{value!r} is not a relative posix path of a .py file inside context/"
            )
        return value

    @field_validator("module", "qualified_name")
    @classmethod
    def _dotted(cls, value: str) -> str:
        if value and not all(part.isidentifier() for part in value.split(".")):
            raise ValueError(f"{value!r} is not a dotted Python name")
        return value


def trees_cache() -> Path:
    """Where pools' context trees are materialized: ``pools/`` beside the verdict cache."""
    return default_cache_path().parent / "pools"


def _context_dir(pool: Pool) -> Path | None:
    """``<pool dir>/context`` when it is a folder of the pool's own (never a link), else None."""
    if pool.source is None:
        return None
    folder = pool.source.parent if pool.source.name == "data" else pool.source
    if entry_kind(folder, CONTEXT_DIR) is not EntryKind.DIR:
        return None
    return folder / CONTEXT_DIR


def context_root(pool: Pool) -> Path | None:
    """``<pool dir>/context`` for a pool loaded from files (``data/``'s sibling), else None; a
    context root of this process (`guardrail.roots`): the pool was chosen by its user. None too
    when ``context`` is no folder of the pool's own: a link there is pool data naming a host
    folder, which would become a context root and have its files shipped."""
    folder = _context_dir(pool)
    return None if folder is None else register_context_root(folder)


_MATERIALIZED: dict[tuple[Path, Path, str], Path] = {}


def entry_root(pool: Pool, entry: CorpusEntry) -> Path | None:
    """The folder ``entry``'s module lives in: its tree, materialized (a context root), or the
    pool's ``context/`` for an entry without a tree; None when it has no context to be had.

    Raises:
        TreeError: the entry's tree is damaged (see `guardrail_eval.contexttrees`).
    """
    if entry.context is None:
        return None
    if entry.context.tree is None:
        return context_root(pool)
    folder = _context_dir(pool)
    if folder is None:
        return None
    cache = trees_cache()
    key = (folder.resolve(), cache, entry.context.tree)
    if key not in _MATERIALIZED:
        _MATERIALIZED[key] = materialize(folder, entry.context.tree, cache)
    return _MATERIALIZED[key]


def candidate_metadata(pool: Pool, entry: CorpusEntry) -> dict[str, Any]:
    """The Gate's candidate metadata for ``entry``: its context with ``root``; ``{}`` without one
    (the snippet is then judged on its own, as in every self-contained pool)."""
    root = entry_root(pool, entry)
    if entry.context is None or root is None:
        return {}
    context = entry.context.model_dump(exclude={"tree"})
    return {**context, "root": str(root)}


def module_text(pool: Pool, entry: CorpusEntry) -> str | None:
    """The text of the module file ``entry`` ships in (in its own tree), or None without one."""
    return shipped_module_text(_context_dir(pool), entry.context)


def shipped_module_text(context_dir: Path | None, context: CorpusContext | None) -> str | None:
    """The text of ``context``'s module file in the pool folder ``context_dir`` (in its tree,
    when it names one); None when there is none to be had."""
    if context_dir is None or context is None:
        return None
    try:
        if context.tree is None:
            data = read_in_tree(context_dir, context.file)
        else:
            digest = tree_files(context_dir, context.tree).get(context.file)
            if digest is None:
                return None
            data = object_bytes(context_dir, digest)
        return data.decode("utf-8", errors="replace")
    except (TreeError, OSError, ValueError):
        return None


def missing_context_file(pool: Pool) -> str | None:
    """The id of the first corpus entry whose context ``file`` is not in the pool's context
    folder (the folder missing, or a link in its place, included; for an entry with a tree: not
    in its tree's manifest, or its object missing), or None: the loader refuses such a pool,
    rather than letting every such entry be judged ``missing_context``."""
    folder = _context_dir(pool)
    seen: dict[tuple[str | None, str], bool] = {}
    manifests: dict[str, dict[str, str] | None] = {}
    for entry in pool.corpus.values():
        context = entry.context
        if context is None:
            continue
        if folder is None:  # no context folder, or a link in its place
            return entry.corpus_id
        key = (context.tree, context.file)
        if key not in seen:
            seen[key] = _has_file(folder, context.tree, context.file, manifests)
        if not seen[key]:
            return entry.corpus_id
    return None


def _has_file(
    folder: Path, tree: str | None, file: str, manifests: dict[str, dict[str, str] | None]
) -> bool:
    if tree is None:
        return entry_kind(folder, file) is EntryKind.FILE  # a link is no file here
    if tree not in manifests:
        try:
            manifests[tree] = tree_files(folder, tree)
        except TreeError:
            manifests[tree] = None
    files = manifests[tree]
    digest = None if files is None else files.get(file)
    return digest is not None and entry_kind(folder, f"{OBJECTS_DIR}/{digest}") is EntryKind.FILE
