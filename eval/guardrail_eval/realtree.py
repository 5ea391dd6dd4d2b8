"""A real code tree made into a pool's ``context/`` folder, and the functions indexed from it.

`stage_tree` copies the Python files that ``guardrail index`` would index (tests left out, as
`guardrail.index.split_tree` does) from one or more source trees into one folder that is their
``sys.path`` root: each file goes to its path relative to its own root (the folder above its
outermost package, `guardrail.context.context_metadata`), so ``more_itertools/more.py`` stays
``more_itertools/more.py``. The pool is built from, and judged against, exactly this copy.
Sources are walked and read with `guardrail.tree` (no link followed, regular files only), so a
link in a source tree never copies a host file into a pool. `indexed_functions` splits the copy
into snippets, each with a stable key ``module:qualified_name`` (``@line`` added when one module
defines a name twice).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from guardrail.context import context_metadata
from guardrail.errors import InputError
from guardrail.index import Snippet
from guardrail.index.splitter import split_tree
from guardrail.tree import read_in_tree
from guardrail_eval.poolcontext import CorpusContext

__all__ = ["IndexedFunction", "StagedTree", "indexed_functions", "stage_tree"]


@dataclass(frozen=True)
class StagedTree:
    """The copied files (posix paths under the staging folder) and what was left out, why."""

    files: tuple[str, ...]
    notes: tuple[str, ...]


@dataclass(frozen=True)
class IndexedFunction:
    """One function or method of the staged tree: its key, snippet and context."""

    key: str
    snippet: Snippet
    context: CorpusContext

    def metadata(self, root: Path) -> dict[str, str]:
        """The Gate's candidate metadata for it, with the staged tree at ``root``."""
        return {**self.context.model_dump(), "root": str(root)}


def stage_tree(sources: Sequence[Path], staging: Path) -> StagedTree:
    """Copy the indexable ``.py`` files of every source tree into ``staging``; see the module.

    A file whose name is no import name, or whose path relative to its root was already taken by
    an earlier file, is left out and noted (so are files that do not parse).

    Raises:
        PoolBuildError: a source is not a folder, or no Python file is left to copy.
    """
    from guardrail_eval.build import PoolBuildError

    copied: dict[str, Path] = {}
    notes: list[str] = []
    for source in sources:
        if not source.is_dir():
            problem = "no such folder" if not source.exists() else "not a folder"
            raise PoolBuildError(f"{source}: {problem}; give the root of a Python code tree")
        tree = split_tree(source)
        notes += [f"not indexed: {skipped}" for skipped in tree.skipped.files]
        for file in tree.files:
            try:
                where = context_metadata(file)
                relative = where["file"]
                data = read_in_tree(where["root"], relative)  # what was split, never a link
            except InputError as exc:
                notes.append(f"left out {file}: {exc}")
                continue
            if relative in copied:
                notes.append(f"left out {file}: {relative} is taken by {copied[relative]}")
                continue
            copied[relative] = Path(file)
            target = staging / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
    if not copied:
        named = ", ".join(str(source) for source in sources)
        raise PoolBuildError(f"{named}: no Python file to build a pool from")
    return StagedTree(files=tuple(sorted(copied)), notes=tuple(notes))


def indexed_functions(staging: Path) -> list[IndexedFunction]:
    """Every function and method of the staged tree, in file and source order (see the module).

    Only snippets whose module lives at the staging root are kept (all of them, for a tree
    `stage_tree` wrote).
    """
    root = str(staging.resolve())
    found: list[IndexedFunction] = []
    keys: set[str] = set()
    for snippets in split_tree(staging).files.values():
        for snippet in snippets:
            if snippet.root != root or not snippet.module:
                continue
            key = f"{snippet.module}:{snippet.qualified_name}"
            if key in keys:
                key = f"{key}@{snippet.start_line}"
            keys.add(key)
            context = CorpusContext(
                file=snippet.file, module=snippet.module, qualified_name=snippet.qualified_name
            )
            found.append(IndexedFunction(key, snippet, context))
    return found
