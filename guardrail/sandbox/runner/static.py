"""Static checks of candidate source: nothing here runs the code."""

from __future__ import annotations

import ast
import re

# A line that starts like Python: text that does not parse and has none is prose, not code.
_CODE_HINT = re.compile(
    r"^\s*(def |class |import |from \S+ import |@\w|return\b|(if|for|while|with|try)\b.*:\s*$"
    r"|[\w.\[\]]+\s*[-+*/]?=)",
    re.MULTILINE,
)


def precheck(code: str) -> tuple[str, str] | None:
    """``(reason, message)`` when the code cannot run at all, else None. Runs nothing."""
    if not code.strip():
        return "not_python", "the candidate is empty"
    try:
        ast.parse(code)
    except SyntaxError as exc:
        if not _CODE_HINT.search(code):
            return "not_python", "the candidate is not Python source (it does not parse)"
        return "syntax_error", f"SyntaxError at line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # e.g. source with NUL bytes
        return "not_python", f"the candidate is not Python source: {exc}"
    return None


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
