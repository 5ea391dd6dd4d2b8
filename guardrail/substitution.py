"""Put a candidate's text in place of a definition in its module's current source.

What is judged is always the retrieved text: the definition found at the qualified name in the
module as it is now is replaced by the candidate's definition (decorators included, re-indented
into its class or block); every definition of that name is replaced (``if``/``else`` branches), so
whichever runs is the candidate's. The candidate's other top-level statements (the imports the
index put before a function) go just before it; ``from __future__`` imports go to the module's
top, where Python requires them. A name gone from the file (a stale index): a top-level function
is appended to the module, a method to its class; a method whose class is gone cannot be placed.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from dataclasses import dataclass

from guardrail.module_imports import parsed_module
from guardrail.precheck import at_line

__all__ = ["Substituted", "SubstitutionError", "substitute"]

_Definition = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
# Tokens whose text may span lines and must keep their lines' leading whitespace (3.12 adds
# FSTRING_MIDDLE for the literal parts of an f-string).
_STRING_TOKENS = {tokenize.STRING, getattr(tokenize, "FSTRING_MIDDLE", tokenize.STRING)}


_LINE_BREAK = re.compile(r"\r\n|\r|\n")


class SubstitutionError(Exception):
    """The candidate's text cannot be placed in the module (the message says why)."""


@dataclass(frozen=True, slots=True)
class Substituted:
    """The module source with the candidate's text in it.

    ``lines``: 1-based inclusive line ranges of the candidate's definition in ``source`` (empty
    when the candidate's text does not define the qualified name's last part: then the whole
    text is appended to the module as it is).
    """

    source: str
    lines: tuple[tuple[int, int], ...]


@dataclass(frozen=True, slots=True)
class _Edit:
    start: int  # first line replaced (1-based); an insertion replaces nothing before ``start``
    end: int  # last line replaced; ``start - 1`` for an insertion
    text: list[str]
    definition: bool = False


def substitute(module_source: str, code: str, qualified_name: str) -> Substituted:
    """``module_source`` with ``code`` in place of the definition at ``qualified_name``.

    Raises:
        SubstitutionError: the module does not parse, the name cannot be isolated on its lines,
            or a method's class is gone from the module.
    """
    try:  # the tree's module is hostile too: nesting that exhausts the parser is a SyntaxError
        module = parsed_module(module_source)  # read, never changed: shared
    except SyntaxError as exc:
        raise SubstitutionError(f"the module does not parse now{at_line(exc)}") from None
    candidate = ast.parse(code)  # the gate parsed it already (precheck)
    lines = _lines(module_source)
    code_lines = _lines(code)
    parts = qualified_name.split(".") if qualified_name else []
    definition = _own_definition(candidate, parts[-1]) if parts else None
    future = [n for n in candidate.body if _is_future(n)]
    extras = [n for n in candidate.body if n is not definition and n not in future]
    edits: list[_Edit] = []
    if future:
        edits.append(
            _Edit(_future_line(module), _future_line(module) - 1, _text(code_lines, future))
        )
    if definition is None:  # nothing to put in place: the whole text goes at the end
        edits.append(_Edit(len(lines) + 1, len(lines), ["", *_text(code_lines, extras)]))
        return _apply(lines, edits)
    body = _indented(_source_of(code_lines, definition), "")
    targets = _targets(module.body, parts)
    if targets:
        for target in targets:
            indent = _indent_of(lines, target)
            start = _first_line(target)
            edits.append(_Edit(start, start - 1, _text(code_lines, extras, indent)))
            edits.append(_Edit(start, target.end_lineno or start, _indented(body, indent), True))
    elif len(parts) == 1:  # gone from the file: the candidate's function goes at the end
        end = len(lines)
        edits.append(_Edit(end + 1, end, ["", *_text(code_lines, extras)]))
        edits.append(_Edit(end + 1, end, body, True))
    else:
        owner = _targets(module.body, parts[:-1])
        if not owner or not isinstance(owner[0], ast.ClassDef):
            raise SubstitutionError(f"class {'.'.join(parts[:-1])!r} is gone from the module")
        cls = owner[0]
        indent = _indent_of(lines, cls.body[0])
        top = _top_statement(module, cls)
        if extras:
            edits.append(_Edit(_first_line(top), _first_line(top) - 1, _text(code_lines, extras)))
        after = cls.end_lineno or cls.lineno
        edits.append(_Edit(after + 1, after, _indented(body, indent), True))
    return _apply(lines, edits)


def _apply(lines: list[str], edits: list[_Edit]) -> Substituted:
    """Apply non-overlapping edits (stable for insertions at one line) and track definitions."""
    out: list[str] = []
    ranges: list[tuple[int, int]] = []
    position = 1  # next original line to copy
    for edit in sorted(edits, key=lambda e: (e.start, e.end - e.start)):
        out.extend(lines[position - 1 : edit.start - 1])
        position = max(position, edit.start)
        if edit.definition:
            ranges.append((len(out) + 1, len(out) + len(edit.text)))
        out.extend(edit.text)
        position = max(position, edit.end + 1)
    out.extend(lines[position - 1 :])
    return Substituted("\n".join(out) + "\n", tuple(ranges))


def _lines(source: str) -> list[str]:
    """Lines as Python numbers them (only \\n, \\r\\n and \\r break a line; str.splitlines
    also breaks at form feeds and other separators, which would shift every later number)."""
    lines = _LINE_BREAK.split(source)
    return lines[:-1] if lines and lines[-1] == "" else lines


def _own_definition(candidate: ast.Module, name: str) -> _Definition | None:
    found = [n for n in candidate.body if isinstance(n, _Definition) and n.name == name]
    return found[-1] if found else None  # the last one is what the name is bound to


def _is_future(node: ast.stmt) -> bool:
    return isinstance(node, ast.ImportFrom) and node.module == "__future__"


def _future_line(module: ast.Module) -> int:
    """Where future imports may go: after the docstring and the module's own future imports."""
    line = 1
    for index, node in enumerate(module.body):
        docstring = (
            index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
        )
        if not (docstring or _is_future(node)):
            break
        line = (node.end_lineno or node.lineno) + 1
    return line


def _targets(body: list[ast.stmt], parts: list[str]) -> list[_Definition]:
    """Every definition at ``parts`` (``A.B.f``): through if/try/with/loop blocks, never into
    functions; a class part descends into that class's body."""
    found: list[_Definition] = []
    for node in _definitions(body):
        if node.name != parts[0]:
            continue
        if len(parts) == 1:
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found.extend(_targets(node.body, parts[1:]))
    return found


def _definitions(body: list[ast.stmt]) -> list[_Definition]:
    found: list[_Definition] = []
    for node in body:
        if isinstance(node, _Definition):
            found.append(node)
        else:
            for child in ast.iter_child_nodes(node):
                nested = child.body if isinstance(child, ast.ExceptHandler) else [child]
                found.extend(_definitions([n for n in nested if isinstance(n, ast.stmt)]))
    return found


def _top_statement(module: ast.Module, inner: ast.stmt) -> ast.stmt:
    for node in module.body:
        if (node.lineno or 0) <= inner.lineno <= (node.end_lineno or 0):
            return node
    return inner


def _first_line(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _indent_of(lines: list[str], node: ast.stmt) -> str:
    """The indentation of ``node``'s first line; refused when something else shares it."""
    line = lines[_first_line(node) - 1]
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if len(indent) != node.col_offset:  # a decorator's "@" stands where its "def" does
        raise SubstitutionError(f"line {node.lineno} holds more than the definition")
    return indent


def _source_of(code_lines: list[str], node: ast.stmt) -> list[str]:
    return code_lines[_first_line(node) - 1 : node.end_lineno or node.lineno]


def _text(code_lines: list[str], nodes: list[ast.stmt], indent: str = "") -> list[str]:
    """The candidate's source of ``nodes`` (in order), re-indented to ``indent``."""
    out: list[str] = []
    for node in nodes:
        out.extend(_indented(_source_of(code_lines, node), indent))
    return out


def _indented(block: list[str], indent: str) -> list[str]:
    """``block`` moved to ``indent``: its common indentation replaced, except on lines that are
    inside a string (a multi-line literal's value must not change)."""
    inside = _string_continuations(block)
    code = [line for number, line in enumerate(block, 1) if number not in inside and line.strip()]
    common = min((len(line) - len(line.lstrip()) for line in code), default=0)
    out = []
    for number, line in enumerate(block, 1):
        if number in inside:
            out.append(line)
        elif line.strip():
            out.append(indent + line[common:])
        else:
            out.append("")
    return out


def _string_continuations(block: list[str]) -> set[int]:
    """1-based numbers of the lines of ``block`` that begin inside a string token."""
    inside: set[int] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(block) + "\n").readline))
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return inside
    for token in tokens:
        if token.type in _STRING_TOKENS and token.end[0] > token.start[0]:
            inside.update(range(token.start[0] + 1, token.end[0] + 1))
    return inside
