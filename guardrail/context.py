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

import ast
import hashlib
import json
import re
import sys
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from guardrail.distribution import tree_distributions
from guardrail.errors import GuardrailError, InputError
from guardrail.substitution import SubstitutionError, substitute

__all__ = [
    "CONTEXT_BYTES",
    "CodeContext",
    "MissingContextError",
    "build_job_context",
    "context_digest",
    "context_from_metadata",
    "context_metadata",
    "imported_module",
]

CONTEXT_BYTES = 3 << 20
"""Most bytes of module sources one job ships (the whole job is capped at 4 MiB)."""

_MAX_MODULE_BYTES = CONTEXT_BYTES  # one file over the whole budget is never read whole
_SCRIPT_PREFIX = "_guardrail_script_"


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

    @property
    def package(self) -> bool:
        """Whether the module is a package (its file is an ``__init__.py``)."""
        return PurePosixPath(self.file).name == "__init__.py"


def context_metadata(path: str | Path, root: str | Path | None = None) -> dict[str, str]:
    """The context keys (``root``, ``file``, ``module``) of a Python file, for documents of any
    retriever. ``root`` defaults to the folder above the file's outermost package (the first
    folder up without an ``__init__.py``), which is what ``sys.path`` would hold.

    Raises:
        InputError: not a ``.py`` file, outside ``root``, or a path that is no import name.
    """
    file = Path(path).resolve()
    if file.suffix != ".py":
        raise InputError(f"{file}: not a Python source file (.py)")
    if root is None:
        top = file.parent
        while (top / "__init__.py").is_file() and top.parent != top:
            top = top.parent
    else:
        top = Path(root).resolve()
    try:
        relative = file.relative_to(top)
    except ValueError:
        raise InputError(f"{file} is not under the context root {top}") from None
    return {"root": str(top), "file": relative.as_posix(), "module": _module_name(relative)}


def context_from_metadata(
    metadata: Mapping[str, Any], context_root: str | Path | None = None
) -> CodeContext | None:
    """The candidate's context from its metadata; ``None`` when it carries none (no ``file``,
    one not ending in ``.py``, or a relative one with neither ``root`` nor ``module`` nor a
    ``context_root``: a label, as hand-made snippets have): such a candidate runs on its own.
    ``context_root`` (when given) is where relative ``file`` names live, in place of the stored
    ``root`` (an index built on another machine).

    Raises:
        MissingContextError: a ``file`` is given but its context cannot be worked out.
    """
    file = metadata.get("file")
    if not isinstance(file, str) or not file.endswith(".py"):
        return None  # no file, or one that is no Python module (a retriever's own "file" key)
    qualified = str(metadata.get("qualified_name") or "")
    lines = {key: _int(metadata.get(key)) for key in ("start_line", "end_line")}
    if Path(file).is_absolute():  # a collection written before contexts: the path says it all
        try:
            found = context_metadata(file)
        except InputError as exc:
            raise MissingContextError(f"no module context: {exc}") from None
        return CodeContext(Path(found["root"]), found["file"], found["module"], qualified, **lines)
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
    try:
        name = module if isinstance(module, str) and module else _module_name(PurePosixPath(file))
    except InputError as exc:
        raise MissingContextError(f"no module context: {exc}") from None
    return CodeContext(Path(root), PurePosixPath(file).as_posix(), name, qualified, **lines)


def build_job_context(code: str, context: CodeContext) -> dict[str, Any]:
    """The job's ``context`` payload: the target module with ``code`` substituted, its
    packages and the in-root modules its imports reach (see the module docstring).

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
    source = _read(context.root / context.file, required=True)
    assert source is not None
    try:
        placed = substitute(source, code, context.qualified_name)
    except SubstitutionError as exc:
        raise MissingContextError(f"{context.file}: {exc}") from None
    modules: dict[str, dict[str, Any]] = {}
    budget = _Budget()
    for name in _parents(context.module):  # the packages above it are required
        entry = _entry(context.root, name, package=True)
        if entry is None:
            raise MissingContextError(f"package {name!r} of {context.file} cannot be read")
        budget.take(entry, required=True)
        modules[name] = entry
    target = {"file": context.file, "package": context.package, "source": placed.source}
    budget.take(target, required=True)
    modules[context.module] = target
    _add_reachable(context.root, modules, budget)
    judged = None
    if placed.lines and context.qualified_name:
        judged = {"name": context.qualified_name, "lines": [list(r) for r in placed.lines]}
    payload: dict[str, Any] = {"module": context.module, "modules": modules, "judged": judged}
    distributions = tree_distributions(context.root, top)  # for importlib.metadata
    if distributions:
        payload["distributions"] = distributions
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


def _add_reachable(root: Path, modules: dict[str, dict[str, Any]], budget: _Budget) -> None:
    """Breadth-first over imports from the shipped modules; each found module's packages too."""
    queue = deque(modules)
    seen = set(modules)
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
                found = _entry(root, candidate)
                if found is not None and budget.take(found):
                    modules[candidate] = found
                    queue.append(candidate)


def _imports_of(name: str, entry: Mapping[str, Any]) -> list[str]:
    """Dotted names a module's imports may load (anywhere in it: lazy imports count)."""
    try:
        tree = ast.parse(str(entry["source"]))
    except (SyntaxError, ValueError):
        return []  # it fails in the sandbox as it would in the package
    package = name if entry["package"] else name.rpartition(".")[0]
    wanted: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            wanted.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = imported_module(node, package)
            if base is None:
                continue
            if base:
                wanted.append(base)
            wanted.extend(f"{base}.{a.name}" if base else a.name for a in node.names)
    return [w for w in wanted if w and "*" not in w]


def imported_module(node: ast.ImportFrom, package: str) -> str | None:
    """The absolute dotted module a ``from`` import in ``package`` names (``""`` for ``from .
    import x`` at the top level), None for a relative import climbing above the top package."""
    if not node.level:
        return node.module or ""
    parts = package.split(".") if package else []
    if node.level - 1 > len(parts):
        return None
    anchor = ".".join(parts[: len(parts) - (node.level - 1)])
    return ".".join(p for p in (anchor, node.module or "") if p)


def _entry(root: Path, name: str, *, package: bool | None = None) -> dict[str, Any] | None:
    """``{"file", "package", "source"}`` of module ``name`` under ``root``, None if absent.

    A folder without ``__init__.py`` on the way is a namespace package: shipped empty.
    """
    folder = root.joinpath(*name.split("."))
    init = folder / "__init__.py"
    if init.is_file():
        source = _read(init)
        relative = init.relative_to(root).as_posix()
        return None if source is None else {"file": relative, "package": True, "source": source}
    if package and folder.is_dir():
        return {"file": folder.relative_to(root).as_posix() + "/", "package": True, "source": ""}
    module = folder.with_suffix(".py")
    if package is not True and module.is_file():
        source = _read(module)
        relative = module.relative_to(root).as_posix()
        return None if source is None else {"file": relative, "package": False, "source": source}
    return None


def _read(path: Path, *, required: bool = False) -> str | None:
    """A module's text; None (or, when ``required``, `MissingContextError`) if it cannot be had."""
    why = ""
    try:
        size = path.stat().st_size
        if size <= _MAX_MODULE_BYTES:
            return path.read_bytes().decode("utf-8-sig")
        why = f"{size:,} bytes, over {CONTEXT_BYTES:,}"
    except OSError as exc:
        why = exc.strerror or str(exc)
    except UnicodeDecodeError:
        why = "not UTF-8 text"
    if required:
        raise MissingContextError(f"cannot read the candidate's module {path}: {why}")
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
