"""Static checks of candidate source inside the container: nothing here runs the code.

The host-side precheck (size, parse, "is this Python at all") lives in `guardrail.precheck`.
"""

from __future__ import annotations

import ast


def plausible_functions(code: str) -> list[str]:
    """Top-level public functions that no other top-level function calls (helpers excluded)."""
    tree = ast.parse(code)
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    ]
    called = {
        node.func.id
        for top in tree.body
        if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(top)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id != top.name
    }
    return [name for name in defined if name not in called] or defined


def module_statements(body: list[ast.stmt]) -> list[ast.stmt]:
    """The statements a module runs at its top level: ``body`` and, inside it, the bodies of its
    if/try/with/loop blocks (never inside function or class definitions), in source order."""
    found: list[ast.stmt] = []
    for node in body:
        found.append(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for child in ast.iter_child_nodes(node):
            nested = child.body if isinstance(child, ast.ExceptHandler) else [child]
            found.extend(module_statements([n for n in nested if isinstance(n, ast.stmt)]))
    return found
