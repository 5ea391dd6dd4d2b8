"""Which host folders a candidate's module context may be read from: the context roots.

A retrieved document's metadata names where its code lives (``root``, ``file``; see
`guardrail.context`), and the host reads that module and its imports to ship them into the
sandbox. Metadata is as hostile as the code it comes with (a planted corpus entry, a vector store
filled by someone else), so a ``root`` taken from it is never trusted on its own word: the host
reads only under a root that the host itself vouched for, in this process or by configuration:

* the package a file given to ``guardrail.context_metadata`` belongs to (its outermost package
  folder; a file outside any package: that file alone), or the ``root`` given with it;
* a folder (or lone file) ``guardrail index`` or `guardrail.index.split_tree` read; a
  `guardrail.CodeIndex` records those its snippets lie in, in the collection, so a process that
  opens the collection again trusts them too (never the wider ``sys.path`` folder above them);
* ``Gate(context_roots=[...])`` and ``Gate(context_root=...)``;
* ``$GUARDRAIL_CONTEXT_ROOTS`` (folders separated by ``os.pathsep``).

A document whose file lies outside every context root is judged ``missing_context`` and nothing
of it is read; of its module context, only files under a context root are read (the rest are
withheld, and an import of one is ``missing_context`` in the sandbox). Within a root,
`guardrail.tree` keeps every read inside it (no link is followed).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "ENV_VAR",
    "configured_roots",
    "register_context_root",
    "trusted_root",
    "vouching_root",
]

ENV_VAR = "GUARDRAIL_CONTEXT_ROOTS"
"""Environment variable naming extra context roots, separated by ``os.pathsep``."""

_REGISTERED: set[Path] = set()


def _absolute(path: str | Path) -> Path:
    # resolve(): a root reached through a link is recorded as the folder it names, so a later
    # check compares like with like.
    return Path(os.path.abspath(path)).resolve()


def register_context_root(path: str | Path) -> Path:
    """Trust ``path`` as a context root for the rest of this process; returns it resolved."""
    root = _absolute(path)
    _REGISTERED.add(root)
    return root


def configured_roots(extra: Iterable[str | Path] = ()) -> frozenset[Path]:
    """Every context root this process trusts: registered ones, ``$GUARDRAIL_CONTEXT_ROOTS``
    and ``extra`` (a gate's own)."""
    from_env = [part for part in os.environ.get(ENV_VAR, "").split(os.pathsep) if part]
    return frozenset({*_REGISTERED, *(_absolute(p) for p in [*from_env, *extra])})


def trusted_root(root: str | Path, extra: Iterable[str | Path] = ()) -> Path | None:
    """``root`` resolved when it is a context root or lies inside one, else ``None``."""
    return None if vouching_root(root, extra) is None else _absolute(root)


def vouching_root(path: str | Path, extra: Iterable[str | Path] = ()) -> Path | None:
    """The context root ``path`` is (or lies inside), resolved; ``None`` when there is none. A
    context root that is a file vouches for that file only."""
    try:
        candidate = _absolute(path)
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a link loop
        return None
    for allowed in sorted(configured_roots(extra)):
        if candidate == allowed or candidate.is_relative_to(allowed):
            return allowed
    return None
