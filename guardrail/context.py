"""Where a snippet lives, and the module payload that lets the sandbox judge it there.

A snippet is judged inside its own module: the candidate process (never the judge, never the
host) loads the module it came from, from the indexed tree as it is now, with the candidate's
text in place of the definition at its qualified name (`guardrail.substitution`), so helpers,
constants, sentinels and relative imports resolve as in the real package. A stale index never
lets the file's version be judged instead of the retrieved text.

Metadata keys (any retriever's documents may carry them; `context_metadata` computes them):
``root`` (the sys.path folder, absolute), ``file`` (posix path relative to ``root``), ``module``
(dotted import name), ``qualified_name`` (``peekable.peek``), ``start_line``/``end_line``.
Collections written before these keys existed store ``file`` as an absolute path and no
``module``: the context is computed from that path.

What is shipped: the target module (substituted), the ``__init__`` of each package above it, and
the modules under ``root`` reachable from them by imports (relative or absolute, at any depth,
transitively), standard-library names excepted. The payload is capped at `CONTEXT_BYTES`, which
leaves room under the sandbox's 4 MiB job limit for code, tests and setup: when the target and
its packages alone exceed it, the context cannot be had (``missing_context``); otherwise modules
are added in import order while they fit, and one left out makes the import that needs it a
``missing_context`` in the sandbox, never a failure.

With the modules go the name and version of the distribution the package belongs to, when the
tree says them (`guardrail.distribution`), for a package that reads its own metadata at import.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import sys
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from guardrail.distribution import tree_distributions
from guardrail.errors import GuardrailError, InputError
from guardrail.module_imports import imports_of
from guardrail.roots import configured_roots, register_context_root, trusted_root
from guardrail.substitution import SubstitutionError, substitute
from guardrail.tree import (
    MAX_SOURCE_BYTES,
    EntryKind,
    TreeFileError,
    entry_kind,
    read_in_tree,
    tree_root,
)

__all__ = [
    "CONTEXT_BYTES",
    "CodeContext",
    "MissingContextError",
    "ModuleReads",
    "build_job_context",
    "context_digest",
    "context_from_metadata",
    "context_metadata",
]

CONTEXT_BYTES = 3 << 20
"""Most bytes of module sources one job ships (the whole job is capped at 4 MiB)."""

_MAX_MODULE_BYTES = CONTEXT_BYTES  # one file over the whole budget is never read whole
_SCRIPT_PREFIX = "_guardrail_script_"
_MAX_WITHHELD = 200  # names of withheld modules a payload lists


class MissingContextError(GuardrailError):
    """A snippet's module context cannot be had; the verdict is ``missing_context``."""


@dataclass(frozen=True, slots=True)
class CodeContext:
    """Where a candidate lives: ``root`` (absolute), ``file`` (posix, relative to root),
    ``module`` (dotted), ``qualified_name`` (may be empty), line range as indexed."""

    root: Path
    file: str
    module: str
    qualified_name: str = ""
    start_line: int = 0
    end_line: int = 0
    trusted: tuple[Path, ...] | None = None
    """The context roots every file read must lie under (`guardrail.roots`; set from metadata:
    `context_from_metadata`); None when the caller named ``root`` itself and vouches for it."""

    @property
    def package(self) -> bool:
        """Whether the module is a package (its file is an ``__init__.py``)."""
        return PurePosixPath(self.file).name == "__init__.py"


def context_metadata(path: str | Path, root: str | Path | None = None) -> dict[str, str]:
    """The context keys (``root``, ``file``, ``module``) of a Python file, for documents of any
    retriever. ``root`` defaults to the folder above the file's outermost package (the first
    folder up without an ``__init__.py``), which is what ``sys.path`` would hold. What the
    caller vouched for becomes a context root of this process (`guardrail.roots`): the ``root``
    it gave, else the file's outermost package folder (a file in no package: the file alone).

    Only the root is resolved (`guardrail.tree.tree_root`); the file's path below it is taken as
    written, never through its links, so a link to a file elsewhere names the link, not its
    target (and `build_job_context` then refuses to read it).

    Raises:
        InputError: not a ``.py`` file, outside ``root``, or a path that is no import name.
    """
    file = Path(os.path.abspath(path))
    if file.suffix != ".py":
        raise InputError(f"{file}: not a Python source file (.py)")
    top = _package_top(file) if root is None else Path(os.path.abspath(root))
    try:
        relative = PurePosixPath(file.relative_to(top).as_posix())
    except ValueError:
        try:  # the file given by its real path, the root by a link to it
            relative = PurePosixPath(file.relative_to(os.path.realpath(top)).as_posix())
        except ValueError:
            raise InputError(f"{file} is not under the context root {top}") from None
    module = _module_name(relative)
    # What the caller vouched for: the root it named, else the file's package (or the file).
    if root is not None:
        register_context_root(top)
    else:
        register_context_root(top / relative.parts[0])
    return {"root": os.path.realpath(top), "file": relative.as_posix(), "module": module}


def context_from_metadata(
    metadata: Mapping[str, Any],
    context_root: str | Path | None = None,
    context_roots: Iterable[str | Path] = (),
) -> CodeContext | None:
    """The candidate's context from its metadata; ``None`` when it carries none (no ``file``,
    one not ending in ``.py``, or a relative one with neither ``root`` nor ``module`` nor a
    ``context_root``: a label, as hand-made snippets have): such a candidate runs on its own.
    ``context_root`` (when given) is where relative ``file`` names live, in place of the stored
    ``root`` (an index built on another machine). A stored ``root`` (or the root of an absolute
    ``file``) is used only when it lies in a context root (`guardrail.roots`: registered ones,
    ``$GUARDRAIL_CONTEXT_ROOTS``, ``context_roots``): metadata never decides on its own which
    host folder is read.

    Raises:
        MissingContextError: a ``file`` is given but its context cannot be worked out, or it
            names a folder outside every context root, or climbs out of its root (``..``).
    """
    file = metadata.get("file")
    if not isinstance(file, str) or not file.endswith(".py"):
        return None  # no file, or one that is no Python module (a retriever's own "file" key)
    qualified = str(metadata.get("qualified_name") or "")
    lines = {key: _int(metadata.get(key)) for key in ("start_line", "end_line")}
    if "\0" in file:
        raise MissingContextError("no module context: the file name holds a NUL byte")
    if Path(file).is_absolute():  # a collection written before contexts: the path says it all
        try:
            found = _outermost_package(Path(os.path.abspath(file)))
        except InputError as exc:
            raise MissingContextError(f"no module context: {exc}") from None
        own = [context_root] if context_root is not None else []
        trusted = _trusted(Path(os.path.abspath(file)), [*context_roots, *own], "file", file)
        root_path = Path(os.path.realpath(found[0]))
        return CodeContext(root_path, found[1], found[2], qualified, **lines, trusted=trusted)
    stored_root = metadata.get("root")
    root = context_root if context_root is not None else stored_root
    module = metadata.get("module")
    if not (root or module):
        return None  # a bare relative name is a label (hand-made snippets), not a context
    if not root or not isinstance(root, str | Path):
        raise MissingContextError(
            f"no module context: {file!r} is relative and no root is known"
            " (pass Gate(context_root=...) or store 'root' in the metadata)"
        )
    if ".." in PurePosixPath(file).parts or "\0" in str(root):
        raise MissingContextError(f"no module context: {file!r} climbs out of its root")
    # The caller's own root is trusted; a stored one must be vouched for, file by file.
    vouched = None
    if context_root is None:
        vouched = _trusted(Path(root, file), context_roots, "root", root)
    try:
        name = module if isinstance(module, str) and module else _module_name(PurePosixPath(file))
    except InputError as exc:
        raise MissingContextError(f"no module context: {exc}") from None
    return CodeContext(
        Path(root), PurePosixPath(file).as_posix(), name, qualified, **lines, trusted=vouched
    )


def _package_top(file: Path) -> Path:
    """The folder above the outermost package of an absolute ``.py`` path (no link followed)."""
    top = file.parent
    while entry_kind(top, "__init__.py") is EntryKind.FILE and top.parent != top:
        top = top.parent
    return top


def _outermost_package(file: Path) -> tuple[Path, str, str]:
    """(root, file relative to it, module) of an absolute ``.py`` path, without reading it."""
    top = _package_top(file)
    relative = file.relative_to(top)
    return top, relative.as_posix(), _module_name(relative)


def _trusted(
    target: Path, context_roots: Iterable[str | Path], key: str, shown: object
) -> tuple[Path, ...]:
    """The context roots in force, when the candidate's own file ``target`` lies under one."""
    extra = tuple(context_roots)
    if trusted_root(target, extra) is None:
        raise MissingContextError(
            f"no module context: the metadata's {key} {str(shown)[:200]!r} is not under any"
            " context root, so nothing is read from it (index the folder, or pass"
            " Gate(context_roots=[...]) or $GUARDRAIL_CONTEXT_ROOTS)"
        )
    return tuple(configured_roots(extra))


class ModuleReads:
    """The tree's modules as one call saw them: each module is read (and its absence checked)
    once however many candidates of that call reach it. Make one per `Gate.verify` call, never
    keep one longer: a later call must read the files again.
    """

    def __init__(self) -> None:
        self._entries: dict[tuple[Path, str, tuple[Path, ...] | None, bool | None], Any] = {}
        self._present: dict[tuple[Path, str], bool] = {}

    def entry(
        self, root: Path, name: str, trusted: tuple[Path, ...] | None, package: bool | None = None
    ) -> dict[str, Any] | None:
        """`_entry`, remembered; a copy, so a payload never shares a dict with another."""
        key = (root, name, trusted, package)
        if key not in self._entries:
            self._entries[key] = _entry(root, name, trusted, package=package)
        found = self._entries[key]
        return None if found is None else dict(found)

    def in_tree(self, root: Path, name: str) -> bool:
        """`_in_tree`, remembered."""
        key = (root, name)
        if key not in self._present:
            self._present[key] = _in_tree(root, name)
        return self._present[key]


def build_job_context(
    code: str, context: CodeContext, reads: ModuleReads | None = None
) -> dict[str, Any]:
    """The job's ``context`` payload: the target module with ``code`` substituted, its
    packages and the in-root modules its imports reach (see the module docstring). ``reads``
    shares the modules read between the candidates of one call (a fresh one when None).

    Raises:
        MissingContextError: the file cannot be read, does not parse, the definition cannot be
            placed (a method whose class is gone), the module shadows the standard library, or
            the required modules exceed `CONTEXT_BYTES`.
    """
    top = context.module.split(".")[0]
    if top in sys.stdlib_module_names or top.startswith("guardrail_runner"):
        raise MissingContextError(
            f"module {context.module!r} has the name of a standard-library module; in the"
            " sandbox that name is the standard library's"
        )
    root = _confined_root(context.root)
    trusted = context.trusted
    reads = ModuleReads() if reads is None else reads
    source = _read(root, context.file, trusted, required=True, max_bytes=MAX_SOURCE_BYTES)
    assert source is not None
    try:
        placed = substitute(source, code, context.qualified_name)
    except SubstitutionError as exc:
        raise MissingContextError(f"{context.file}: {exc}") from None
    modules: dict[str, dict[str, Any]] = {}
    budget = _Budget()
    for name in _parents(context.module):  # the packages above it are required
        entry = reads.entry(root, name, trusted, package=True)
        if entry is None:
            raise MissingContextError(f"package {name!r} of {context.file} cannot be read")
        budget.take(entry, required=True)
        modules[name] = entry
    target = {"file": context.file, "package": context.package, "source": placed.source}
    budget.take(target, required=True)
    modules[context.module] = target
    withheld = _add_reachable(root, modules, budget, trusted, reads)
    judged = None
    if placed.lines and context.qualified_name:
        judged = {"name": context.qualified_name, "lines": [list(r) for r in placed.lines]}
    payload: dict[str, Any] = {"module": context.module, "modules": modules, "judged": judged}
    distributions = tree_distributions(context.root, top)  # for importlib.metadata
    if distributions:
        payload["distributions"] = distributions
    if withheld:
        payload["withheld"] = withheld[:_MAX_WITHHELD]
    return payload


def context_digest(payload: Mapping[str, Any] | None) -> str | None:
    """sha256 of a context payload (canonical JSON); part of the verdict-cache key, so a changed
    helper in the module never reuses a verdict reached with the old one."""
    if payload is None:
        return None
    text = json.dumps(payload, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class _Budget:
    def __init__(self) -> None:
        self.used = 0

    def take(self, entry: Mapping[str, Any], *, required: bool = False) -> bool:
        size = len(json.dumps(entry["source"])) + len(entry["file"]) + 64
        if self.used + size > CONTEXT_BYTES:
            if required:
                raise MissingContextError(
                    f"the module and its packages take over {CONTEXT_BYTES:,} bytes"
                    f" ({entry['file']} alone {size:,}); the sandbox cannot take the context"
                )
            return False
        self.used += size
        return True


def _add_reachable(
    root: Path,
    modules: dict[str, dict[str, Any]],
    budget: _Budget,
    trusted: tuple[Path, ...] | None,
    reads: ModuleReads,
) -> list[str]:
    """Breadth-first over imports from the shipped modules; each found module's packages too.

    Returns the modules withheld: in the tree, reached by an import, but not shipped (refused by
    `guardrail.tree`: a link, a FIFO, too large; or over the budget). An import of one of them
    in the sandbox says so (``missing_context``), rather than failing the code that made it.
    """
    queue = deque(modules)
    seen = set(modules)
    withheld: list[str] = []
    while queue:
        name = queue.popleft()
        entry = modules.get(name)
        if entry is None:
            continue
        for wanted in _imports_of(name, entry):
            for candidate in [*_parents(wanted), wanted]:
                if candidate in seen or candidate.split(".")[0] in sys.stdlib_module_names:
                    continue
                seen.add(candidate)
                found = reads.entry(root, candidate, trusted)
                if found is not None and budget.take(found):
                    modules[candidate] = found
                    queue.append(candidate)
                elif found is not None or reads.in_tree(root, candidate):
                    withheld.append(candidate)
    return withheld


def _in_tree(root: Path, name: str) -> bool:
    """Whether the tree has something (a file, a link, a FIFO...) under module ``name``'s path."""
    folder = PurePosixPath(*name.split("."))
    return any(
        entry_kind(root, path) is not None
        for path in (folder, folder.with_suffix(".py"), folder / "__init__.py")
    )


def _imports_of(name: str, entry: Mapping[str, Any]) -> tuple[str, ...]:
    """Dotted names a shipped module's imports may load (`guardrail.module_imports`)."""
    package = name if entry["package"] else name.rpartition(".")[0]
    return imports_of(str(entry["source"]), package)


def _entry(
    root: Path, name: str, trusted: tuple[Path, ...] | None, *, package: bool | None = None
) -> dict[str, Any] | None:
    """``{"file", "package", "source"}`` of module ``name`` under ``root``, None if absent or
    refused (`guardrail.tree`: a link, not a regular file, too large).

    A folder without ``__init__.py`` on the way is a namespace package: shipped empty.
    """
    folder = PurePosixPath(*name.split("."))
    init = (folder / "__init__.py").as_posix()
    if entry_kind(root, init) is not None:  # a link or a FIFO is refused by `_read`
        source = _read(root, init, trusted)
        return None if source is None else {"file": init, "package": True, "source": source}
    if package and entry_kind(root, folder) is EntryKind.DIR:
        return {"file": folder.as_posix() + "/", "package": True, "source": ""}
    module = folder.with_suffix(".py").as_posix()
    if package is not True and entry_kind(root, module) is not None:
        source = _read(root, module, trusted)
        return None if source is None else {"file": module, "package": False, "source": source}
    return None


def _confined_root(root: Path) -> Path:
    try:
        return tree_root(root)
    except TreeFileError as exc:
        raise MissingContextError(f"no module context: the root {root}: {exc.reason}") from None


def _read(
    root: Path,
    relative: str,
    trusted: tuple[Path, ...] | None,
    *,
    required: bool = False,
    max_bytes: int = _MAX_MODULE_BYTES,
) -> str | None:
    """A module's text, read with `guardrail.tree.read_in_tree` (nothing outside ``root``, no
    link, regular files only) and, when ``trusted`` is given, only under one of those context
    roots; None (or, when ``required``, `MissingContextError`) if it cannot be had."""
    if trusted is not None and trusted_root(root / relative, trusted) is None:
        if required:
            raise MissingContextError(f"{relative} is not under a context root")
        return None
    try:
        return read_in_tree(root, relative, max_bytes=max_bytes).decode("utf-8-sig")
    except TreeFileError as exc:
        why = exc.reason
    except UnicodeDecodeError:
        why = "not UTF-8 text"
    if required:
        raise MissingContextError(f"cannot read the candidate's module {relative}: {why}")
    return None


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _module_name(relative: PurePosixPath | Path) -> str:
    path = PurePosixPath(relative.as_posix())
    if path.suffix != ".py":
        raise InputError(f"{path.as_posix()!r} is not a Python source file (.py)")
    parts = list(path.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    elif parts and not parts[-1].isidentifier():
        # A script no import statement could name (``my-tool.py``) is still a module: it is
        # loaded under a name of its own that no real module has.
        parts[-1] = _SCRIPT_PREFIX + re.sub(r"\W", "_", parts[-1])
    if not parts or not all(part.isidentifier() for part in parts):
        raise InputError(f"{relative.as_posix()!r} is not an importable module path")
    return ".".join(parts)


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0
