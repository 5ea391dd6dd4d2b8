"""Probe values the candidates' own code suggests: its constants, and the values either side.

Near-clones differ at a constant or a comparison (``< 255`` against ``<= 255``, ``% 4`` against
``% 100``, ``len(s) > 8`` against ``> 7``), and only an input at that constant separates them.
So `code_constants` reads the numbers and short strings in the candidates' code (nothing runs),
those that only some candidates have first (where their code differs), then the comparisons'
operands, then the rest; `constant_edits` turns one argument value into values at and around
each number (an int itself, a string's length or one of its digit runs, a list's length or an
element) and into strings holding each string constant (a separator, a marker, a format).
Pure functions of their input; used by `guardrail.probes`.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["CodeConstants", "code_constants", "constant_edits"]

_MAX_NUMBERS = 8
_MAX_TEXTS = 6
_MAX_MAGNITUDE = 10**6  # a bigger number is a mask or a seed, not a boundary worth probing
_MAX_TEXT = 20
_MAX_LENGTH = 64  # a length boundary past this builds too long a value to paste
_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class CodeConstants:
    """Numbers and strings of the candidates' code, most telling first (see the module doc)."""

    numbers: tuple[int | float, ...] = ()
    texts: tuple[str, ...] = ()


def code_constants(trees: Sequence[ast.Module]) -> CodeConstants:
    """The constants of ``trees`` (each a candidate's module), ranked: in some but not all of
    them, then operands of a comparison, then the rest; each kind in source order, capped."""
    numbers: list[list[int | float]] = []
    texts: list[list[str]] = []
    compared: set[int | float] = set()
    for tree in trees:
        found_numbers, found_texts = [], []
        docstrings = _docstrings(tree)
        negated = {  # the 1 of a -1 is no constant of its own
            id(node.operand)
            for node in ast.walk(tree)
            if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub)
        }
        for node in sorted(ast.walk(tree), key=_position):
            if isinstance(node, ast.Compare):
                for operand in (node.left, *node.comparators):
                    value = _number(operand)
                    if value is not None:
                        compared.add(value)
            value = _number(node) if id(node) not in negated else None
            if value is not None:
                found_numbers.append(value)
            elif (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and 0 < len(node.value) <= _MAX_TEXT
                and id(node) not in docstrings | negated
            ):
                found_texts.append(node.value)
        numbers.append(found_numbers)
        texts.append(found_texts)
    return CodeConstants(
        numbers=tuple(_ranked(numbers, compared)[:_MAX_NUMBERS]),
        texts=tuple(_ranked(texts, set())[:_MAX_TEXTS]),
    )


def _ranked(per_tree: list[list[Any]], compared: set[Any]) -> list[Any]:
    """Distinct values, those not in every tree first, then the ``compared``, then the rest."""
    everywhere = set.intersection(*(set(found) for found in per_tree)) if per_tree else set()
    ordered = list(dict.fromkeys(value for found in per_tree for value in found))
    return sorted(ordered, key=lambda v: (v in everywhere, v not in compared))


def _docstrings(tree: ast.Module) -> set[int]:
    """Ids of the docstring constants: prose, not values the code compares with."""
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                found.add(id(body[0].value))
    return found


def _number(node: ast.AST) -> int | float | None:
    """The number a constant (or a negated one) is, if it is a probe-sized int or float."""
    sign = 1
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        sign, node = -1, node.operand
    if not isinstance(node, ast.Constant):
        return None
    raw = node.value
    if not isinstance(raw, int | float) or isinstance(raw, bool):
        return None
    value = sign * raw
    return value if abs(value) <= _MAX_MAGNITUDE else None


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def constant_edits(value: Any, constants: CodeConstants) -> Iterator[Any]:
    """``value`` edited towards the code's constants: for each number ``n`` (in rank order),
    values at ``n - 1``, ``n`` and ``n + 1``; for each string, values holding it. May repeat."""
    kind = type(value)
    for number in constants.numbers:
        for near in _around(number):
            if kind is int and isinstance(near, int):
                yield near
            elif kind is float:
                yield float(near)
            elif kind is str:
                yield from _text_near(value, near)
            elif kind in (list, tuple):
                yield from (kind(items) for items in _items_near(list(value), near))
    if kind is str:
        for text in constants.texts:
            middle = len(value) // 2
            yield from (text, value + text, text + value, value[:middle] + text + value[middle:])
    elif kind in (list, tuple) and (not value or all(type(item) is str for item in value)):
        for text in constants.texts:
            yield kind([*value, text])
    if kind in (list, tuple) and value:
        yield from (kind(items) for items in _elements_edited(list(value), constants))


def _elements_edited(items: list[Any], constants: CodeConstants) -> Iterator[list[Any]]:
    """The first or last element set to a constant in place (a string element to each string
    constant, a number to each number; inside a tuple or list element too: ``('deposit', 7)``
    to ``('withdraw', 7)``), and the first element's edits put last (an event after another)."""
    last = len(items) - 1
    for edited in _in_place(items[0], constants, 1):
        yield [edited, *items[1:]]
        if last:
            yield [*items[:-1], edited]
    if last:
        for edited in _in_place(items[last], constants, 1):
            yield [*items[:-1], edited]


def _in_place(value: Any, constants: CodeConstants, depth: int) -> Iterator[Any]:
    """``value`` set to a constant of its own type (for a tuple or list: one item at a time)."""
    if type(value) is str:
        yield from (text for text in constants.texts if text != value)
    elif type(value) in (int, float):
        for number in constants.numbers:
            if number != value and (type(value) is float or isinstance(number, int)):
                yield type(value)(number)
    elif isinstance(value, tuple | list) and depth > 0:
        for index, item in enumerate(value):
            for edited in _in_place(item, constants, depth - 1):
                yield type(value)([*value[:index], edited, *value[index + 1 :]])


def _around(number: int | float) -> tuple[int | float, ...]:
    return (number, number - 1, number + 1)


def _text_near(value: str, number: int | float) -> Iterator[str]:
    """A string of length ``number`` (the value repeated or cut), and the value with one of its
    digit runs set to ``number`` (a date's month, a version's part), padded to its width."""
    if not isinstance(number, int):
        return
    if 0 <= number <= _MAX_LENGTH:
        seed = value or "a"
        yield (seed * (number // len(seed) + 1))[:number]
    if number >= 0:
        for match in _DIGITS.finditer(value):
            digits = str(number).zfill(len(match.group()))
            yield value[: match.start()] + digits + value[match.end() :]


def _items_near(items: list[Any], number: int | float) -> Iterator[list[Any]]:
    """A list with an element set to ``number`` (its first, or one added), and, for a small
    int, the list cut or repeated to that length."""
    if not items or all(type(item) is type(number) for item in items):
        yield [*items, number]
        if items:
            yield [number, *items[1:]]
    if isinstance(number, int) and 0 <= number <= _MAX_LENGTH and items:
        yield (items * (number // len(items) + 1))[:number]
