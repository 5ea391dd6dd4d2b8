"""Module context of a pool's snippets: where a corpus entry lives in the pool's ``context/``.

A pool built from real code (`guardrail_eval.realpool`) ships the source files its snippets need
under ``<pool dir>/context/`` (the folder that would be on ``sys.path``), and each corpus entry
may carry ``context``: ``{"file", "module", "qualified_name"}``. The eval passes it to the Gate as
candidate metadata with ``root`` = that folder (`candidate_metadata`), so the snippet is judged
inside its module (`guardrail.context`), in the gate call and in the ground truth alike.

``file`` must stay inside ``context/``: a relative posix path of ``.py`` file, no ``..``; the
loader refuses anything else (a pool is data, never a way to read the host's files).
"""

from __future__ import annotations

from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict, field_validator

from guardrail.roots import register_context_root
from guardrail.tree import EntryKind, entry_kind

if TYPE_CHECKING:
    from guardrail_eval.pool import CorpusEntry, Pool

__all__ = [
    "CONTEXT_DIR",
    "CorpusContext",
    "candidate_metadata",
    "context_root",
    "missing_context_file",
]

CONTEXT_DIR = "context"
"""The folder beside ``data/`` that holds the source files of a pool's module contexts."""


class CorpusContext(BaseModel):
    """Where a corpus entry lives: ``file`` under ``context/``, its ``module``, its name in it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    file: str
    module: str
    qualified_name: str = ""

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


def context_root(pool: Pool) -> Path | None:
    """``<pool dir>/context`` for a pool loaded from files (``data/``'s sibling), else None; a
    context root of this process (`guardrail.roots`): the pool was chosen by its user. None too
    when ``context`` is no folder of the pool's own: a link there is pool data naming a host
    folder, which would become a context root and have its files shipped."""
    if pool.source is None:
        return None
    folder = pool.source.parent if pool.source.name == "data" else pool.source
    if entry_kind(folder, CONTEXT_DIR) is not EntryKind.DIR:
        return None
    return register_context_root(folder / CONTEXT_DIR)


def candidate_metadata(pool: Pool, entry: CorpusEntry) -> dict[str, Any]:
    """The Gate's candidate metadata for ``entry``: its context with ``root``; ``{}`` without one
    (the snippet is then judged on its own, as in every self-contained pool)."""
    root = context_root(pool)
    if entry.context is None or root is None:
        return {}
    return {**entry.context.model_dump(), "root": str(root)}


def missing_context_file(pool: Pool) -> str | None:
    """The id of the first corpus entry whose context ``file`` is not in the pool's context
    folder (the folder missing, or a link in its place, included), or None: the loader refuses
    such a pool, rather than letting every such entry be judged ``missing_context``."""
    root = context_root(pool)
    seen: dict[str, bool] = {}
    for entry in pool.corpus.values():
        if entry.context is None:
            continue
        if root is None:  # no context folder, or a link in its place
            return entry.corpus_id
        file = entry.context.file
        if file not in seen:
            seen[file] = entry_kind(root, file) is EntryKind.FILE  # a link is no file here
        if not seen[file]:
            return entry.corpus_id
    return None
