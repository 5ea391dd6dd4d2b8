"""Which host folders a candidate's module context may be read from: the context roots.

A retrieved document's metadata names where its code lives (``root``, ``file``; see
`guardrail.context`), and the host reads that module and its imports to ship them into the
sandbox. Metadata is as hostile as the code it comes with (a planted corpus entry, a vector store
filled by someone else), so a ``root`` taken from it is never trusted on its own word: the host
reads only under a root that the host itself vouched for, in this process or by configuration:

* a folder given to ``guardrail.context_metadata`` (the caller computed the metadata from it);
* a folder indexed by a `guardrail.CodeIndex` (it records its roots in the collection, so a
  process that opens the collection again trusts them too);
* ``Gate(context_roots=[...])`` and ``Gate(context_root=...)``;
* ``$GUARDRAIL_CONTEXT_ROOTS`` (folders separated by ``os.pathsep``).

A document whose ``root`` (or, for collections written before roots were stored, whose absolute
``file``) lies outside every context root is judged ``missing_context`` and nothing of it is
read. Inside a root, `guardrail.tree` keeps every read within it (links are not followed out).
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
    try:
        candidate = _absolute(root)
    except (OSError, ValueError, RuntimeError):  # a NUL byte, a link loop
        return None
    for allowed in configured_roots(extra):
        if candidate == allowed or candidate.is_relative_to(allowed):
            return candidate
    return None
