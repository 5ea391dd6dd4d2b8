"""Hidden tests out of sight: a real-code pool's docstring examples, removed from what ships.

A real-code query's tests are its function's doctest examples. Left in the code, they are in
every candidate's text (the canonical's and each mutant's, which keeps its docstring) and in the
shipped modules, so a picker that reads the candidate reads the hidden tests (161 of 166 queries
of the first real-code pool). `strip_examples` removes every docstring's examples (each ``>>>``
line, its ``...`` continuation lines and its expected output, up to a blank line or the next
``>>>``) from a module's source and keeps every other byte; `stripped_functions` rewrites a
staged tree that way and gives each indexed function its stripped text, its tests still the
examples read before (they live only in ``queries.jsonl``, which no candidate and no retriever
is shown).
"""

from __future__ import annotations

import ast
from dataclasses import replace
from pathlib import Path

from guardrail_eval.realtree import IndexedFunction, indexed_functions

__all__ = ["strip_examples", "stripped_functions"]

_PS1 = ">>>"
_QUOTES = ('"""', "'''")


def strip_examples(source: str) -> str:
    """``source`` without the doctest examples of its docstrings (see the module).

    Raises:
        SyntaxError: ``source`` does not parse, or (a docstring laid out in a way this does not
            read) the result would not: nothing is guessed at.
    """
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    replaced: dict[int, str] = {}  # 0-based line -> its new text ("" drops it)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        first = node.body[0] if node.body else None
        if not (
            isinstance(first, ast.Expr)
            and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)
            and first.value.end_lineno is not None
        ):
            continue
        start, end = first.value.lineno - 1, first.value.end_lineno - 1
        for number in _example_lines(lines, start, end):
            replaced[number] = _kept_delimiters(lines[number], number == start, number == end)
    stripped = "".join(replaced.get(number, line) for number, line in enumerate(lines))
    ast.parse(stripped)
    return stripped


def stripped_functions(root: Path, functions: list[IndexedFunction]) -> list[IndexedFunction]:
    """Rewrite every ``.py`` file under ``root`` with `strip_examples`, and return ``functions``
    (indexed from it before) with their stripped code; their tests are unchanged.

    Raises:
        PoolBuildError: a file cannot be stripped, or the stripped tree indexes otherwise.
    """
    from guardrail_eval.build import PoolBuildError

    for path in sorted(root.rglob("*.py")):
        try:
            path.write_text(strip_examples(path.read_text(encoding="utf-8")), encoding="utf-8")
        except (SyntaxError, ValueError, UnicodeDecodeError) as exc:
            raise PoolBuildError(f"{path}: its doctest examples cannot be removed: {exc}") from exc
    after = indexed_functions(root)
    if [(f.context.file, f.context.qualified_name) for f in after] != [
        (f.context.file, f.context.qualified_name) for f in functions
    ]:
        raise PoolBuildError(f"{root}: removing the doctest examples changed what is indexed")
    return [
        replace(
            function, snippet=function.snippet.model_copy(update={"code": stripped.snippet.code})
        )
        for function, stripped in zip(functions, after, strict=True)
    ]


def _example_lines(lines: list[str], start: int, end: int) -> list[int]:
    """The 0-based lines ``start..end`` (a docstring) that belong to a doctest example."""
    found: list[int] = []
    in_example = False
    for number in range(start, end + 1):
        text = _content(lines[number], number == start, number == end).strip()
        if text.startswith(_PS1):
            in_example = True  # its source, then its "..." lines and output up to a blank line
        elif not text:
            in_example = False
        if in_example:
            found.append(number)
    return found


def _content(line: str, first: bool, last: bool) -> str:
    """The docstring's text on ``line``: without the opening/closing quotes on its first/last."""
    if first:
        at = min((line.find(q) for q in _QUOTES if q in line), default=-1)
        line = line[at + 3 :] if at >= 0 else line
    if last:
        at = max(line.rfind(q) for q in _QUOTES)
        line = line[:at] if at >= 0 else line
    return line


def _kept_delimiters(line: str, first: bool, last: bool) -> str:
    """What is left of an example's ``line``: nothing, or the docstring's quotes it carries."""
    if not first and not last:
        return ""
    if not any(q in line for q in _QUOTES):
        return line  # a docstring in single quotes: left as it is
    indent = line[: len(line) - len(line.lstrip())]
    kept = ""
    if first:
        at = min(line.find(q) for q in _QUOTES if q in line)
        kept += line[: at + 3].lstrip()
    if last:
        at = max(line.rfind(q) for q in _QUOTES)
        kept += line[at:].rstrip("\n")
    return f"{indent}{kept}\n"
