"""Docstrings a module copies from another module of its tree, as ``__doc__`` will be at run time.

toolz's curried wrappers end with ``merge.__doc__ = toolz.merge.__doc__``: the examples that test
the wrapper live in another file. `TreeDocstrings` follows such a reference the way the import
system would, by reading (never importing) the tree's sources: through the module's imports
(``import toolz``, ``from .dicttoolz import merge``, relative or absolute), submodules, and
``from x import *`` (underscore names excepted, as there), a few hops deep. A definition's own
docstring comes first, then one its module assigns it; anything else (a class attribute, a call,
a module outside the tree) is not guessed: the function then has no docstring, as before.
"""

from __future__ import annotations

import ast
import inspect
from dataclasses import dataclass, field
from pathlib import Path

from guardrail.module_imports import imported_module
from guardrail.precheck import parse
from guardrail.sandbox.runner.static import module_statements
from guardrail.tree import TreeFileError, entry_kind, read_in_tree

__all__ = ["ModuleNames", "TreeDocstrings"]

_MAX_HOPS = 8  # module-to-module steps one reference may take (import cycles end here)
_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef


@dataclass
class ModuleNames:
    """What a module's top level binds, as far as docstrings are concerned."""

    module: str
    package: str
    docstrings: dict[str, str] = field(default_factory=dict)
    """Each function or class the module defines, with its own docstring (``""`` for none)."""
    assigned: dict[str, ast.expr] = field(default_factory=dict)
    """``name.__doc__ = value`` statements: the value expression, by name."""
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    """A name an import binds: ``(module, None)`` for a module, ``(module, name)`` for a name."""
    star_imports: list[str] = field(default_factory=list)

    @classmethod
    def of(cls, tree: ast.Module, module: str, package: str) -> ModuleNames:
        names = cls(module=module, package=package)
        for node in module_statements(tree.body):
            if isinstance(node, _Definition):
                names.docstrings.setdefault(node.name, ast.get_docstring(node) or "")
            elif isinstance(node, ast.Assign) and (name := _doc_target(node)):
                names.assigned[name] = node.value
            elif isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.asname:
                        names.imports.setdefault(alias.asname, (alias.name, None))
                    else:
                        head = alias.name.split(".")[0]
                        names.imports.setdefault(head, (head, None))
            elif isinstance(node, ast.ImportFrom):
                base = imported_module(node, package)
                if base is None:
                    continue
                for alias in node.names:
                    if alias.name == "*":
                        names.star_imports.append(base)
                    else:
                        names.imports.setdefault(alias.asname or alias.name, (base, alias.name))
        return names


class TreeDocstrings:
    """The docstrings of the modules under one ``sys.path`` folder (``root``), read on demand
    and cached; with no ``root``, only a module's own definitions are known. ``within`` (posix,
    relative to ``root``) confines the modules read to the indexed folder when ``root`` is above
    it (``guardrail index src/pkg`` reads nothing of ``src/other``)."""

    def __init__(self, root: str | Path | None = None, *, within: str = "") -> None:
        self._root = None if root is None else Path(root)  # read with `guardrail.tree`
        self._within = within.strip("/")
        self._modules: dict[str, ModuleNames | None] = {}

    def assigned_in(self, names: ModuleNames) -> dict[str, str]:
        """The docstrings the module ``names`` describes assigns its functions and classes
        (``f.__doc__ = ...``) and can be told, by name."""
        texts = {
            name: self._assigned(names, value, _MAX_HOPS) for name, value in names.assigned.items()
        }
        return {name: text for name, text in texts.items() if text}

    def docstring(self, module: str, name: str) -> str:
        """The docstring ``module.name`` has at run time, ``""`` when it cannot be told."""
        names = self._load(module)
        return "" if names is None else self._lookup(names, name, _MAX_HOPS)

    def _lookup(self, names: ModuleNames, name: str, hops: int) -> str:
        if hops <= 0:
            return ""
        if name in names.docstrings:
            own = names.docstrings[name]
            value = names.assigned.get(name)
            return own if own or value is None else self._assigned(names, value, hops - 1)
        if name in names.imports:
            module, attribute = names.imports[name]
            return self._in_module(module, attribute, hops - 1) if attribute else ""
        for module in names.star_imports:
            if not name.startswith("_") and (found := self._in_module(module, name, hops - 1)):
                return found
        return ""

    def _in_module(self, module: str, name: str, hops: int) -> str:
        names = self._load(module)
        return "" if names is None else self._lookup(names, name, hops)

    def _assigned(self, names: ModuleNames, value: ast.expr, hops: int) -> str:
        if isinstance(value, ast.Constant) and isinstance(value.value, str):
            return inspect.cleandoc(value.value)
        if isinstance(value, ast.Attribute) and value.attr == "__doc__":
            return self._expression(names, value.value, hops)
        return ""

    def _expression(self, names: ModuleNames, expression: ast.expr, hops: int) -> str:
        """The docstring of the dotted name ``expression`` in the module ``names`` describes."""
        path = _dotted(expression)
        if not path or hops <= 0:
            return ""
        head, *rest = path
        if not rest:  # a bare name: the module's own definition, or one it imports
            return self._lookup(names, head, hops - 1)
        module = self._module_bound(names, head)  # a class attribute (``Cls.f``) is not followed
        *submodules, name = rest
        for part in submodules:
            module = f"{module}.{part}" if module and self._load(f"{module}.{part}") else ""
        return self._in_module(module, name, hops - 1) if module else ""

    def _module_bound(self, names: ModuleNames, name: str) -> str:
        """The module ``name`` is bound to in the module ``names`` describes, ``""`` if none."""
        if name in names.docstrings or name not in names.imports:
            return ""
        module, attribute = names.imports[name]
        if attribute is None:
            return module
        submodule = f"{module}.{attribute}"
        return submodule if self._load(submodule) else ""

    def _load(self, module: str) -> ModuleNames | None:
        if module not in self._modules:
            self._modules[module] = self._read(module)
        return self._modules[module]

    def _read(self, module: str) -> ModuleNames | None:
        parts = module.split(".")
        if self._root is None or not all(part.isidentifier() for part in parts):
            return None
        folder = "/".join(parts)
        for path, package in ((f"{folder}/__init__.py", module), (f"{folder}.py", "")):
            inside = not self._within or path.startswith(f"{self._within}/")
            if not inside or entry_kind(self._root, path) is None:
                continue
            try:  # confined to the root, regular files only, exhausting the parser is no crash
                tree = parse(read_in_tree(self._root, path).decode("utf-8-sig"))
            except (TreeFileError, SyntaxError, UnicodeDecodeError):
                return None
            return ModuleNames.of(tree, module, package or module.rpartition(".")[0])
        return None


def _doc_target(node: ast.Assign) -> str:
    """``f`` for ``f.__doc__ = ...``, else ``""``."""
    if len(node.targets) != 1:
        return ""
    target = node.targets[0]
    if isinstance(target, ast.Attribute) and target.attr == "__doc__":
        return target.value.id if isinstance(target.value, ast.Name) else ""
    return ""


def _dotted(expression: ast.expr) -> list[str]:
    """``["toolz", "merge"]`` for ``toolz.merge``; ``[]`` for anything but a dotted name."""
    parts: list[str] = []
    while isinstance(expression, ast.Attribute):
        parts.append(expression.attr)
        expression = expression.value
    if not isinstance(expression, ast.Name):
        return []
    return [expression.id, *reversed(parts)]
