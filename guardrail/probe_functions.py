"""Functions a probe may pass: pure lambdas and a few builtins, checked from their text.

A probe's arguments are texts to paste into a test (`guardrail.probes`), and a question may
come from a candidate's own doctests, so an argument is never code that could do more than
compute. Many real functions take a callable (``split_at(iterable, pred)``, ``sorted(xs,
key=...)``, ``groupby(key, seq)``), and their every call in the tests passes a lambda: without
one no call of them is a seed, and their near-clones are probed only with guesses they all
refuse alike. A callable argument is accepted when its text is:

* one of `PURE_BUILTINS` by name (``len``, ``str``, ``abs``...), or
* a ``lambda`` whose body uses only its own parameters, literals, `PURE_BUILTINS`, operators,
  comparisons, ``and``/``or``/``not``, conditional expressions, subscripts and slices, tuples,
  lists, sets and dicts of those, and calls of `PURE_BUILTINS` or of the `PURE_METHODS` of
  those values (``c.isupper()``, ``s.startswith('a')``). No other name, no attribute outside
  `PURE_METHODS` (so no dunder), no assignment expression, no comprehension, no default that is
  not a literal.

Such a text reaches nothing but its arguments: it cannot import, open, read a global or walk to
an object's internals, wherever it is pasted.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

__all__ = ["PURE_BUILTINS", "PURE_METHODS", "PureFunction", "is_pure_function", "pure_function"]

PURE_BUILTINS = frozenset(
    {"abs", "all", "any", "bool", "chr", "divmod", "float", "int", "len", "list", "max", "min",
     "ord", "repr", "round", "sorted", "str", "sum", "tuple", "set", "frozenset", "dict",
     "isinstance", "bytes"}
)  # fmt: skip
PURE_METHODS = frozenset(
    {"upper", "lower", "isupper", "islower", "isdigit", "isalpha", "isalnum", "isspace",
     "startswith", "endswith", "strip", "lstrip", "rstrip", "split", "join", "count", "index",
     "find", "replace", "get", "keys", "values", "items", "real", "imag", "casefold", "title"}
)  # fmt: skip
MAX_TEXT = 300  # characters of a function's text a probe carries

_OPERATORS = (
    ast.BinOp, ast.UnaryOp, ast.BoolOp, ast.Compare, ast.IfExp, ast.Subscript, ast.Slice,
    ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Constant, ast.Load, ast.operator, ast.unaryop,
    ast.boolop, ast.cmpop, ast.expr_context,
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class PureFunction:
    """A callable argument, as the text it is pasted as (see the module docstring)."""

    text: str


def pure_function(node: ast.expr) -> PureFunction | None:
    """``node`` as a `PureFunction`, or None when its text could do more than compute."""
    if isinstance(node, ast.Name) and node.id in PURE_BUILTINS:
        return PureFunction(node.id)
    if not isinstance(node, ast.Lambda) or not _pure_lambda(node):
        return None
    text = ast.unparse(node)
    return PureFunction(text) if len(text) <= MAX_TEXT else None


def is_pure_function(text: str) -> bool:
    """Whether ``text`` is exactly one `pure_function` expression, in its canonical form (as
    `pure_function` writes it: no comment, no stray whitespace, nothing but the code)."""
    if len(text) > MAX_TEXT:
        return False
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    function = pure_function(tree.body)
    return function is not None and function.text == text


def _pure_lambda(node: ast.Lambda) -> bool:
    given = node.args
    if given.vararg or given.kwarg:
        return False
    defaults = [*given.defaults, *(d for d in given.kw_defaults if d is not None)]
    if not all(isinstance(d, ast.Constant) for d in defaults):
        return False
    bound = {a.arg for a in (*given.posonlyargs, *given.args, *given.kwonlyargs)}
    return _pure(node.body, bound)


def _pure(node: ast.AST, bound: set[str]) -> bool:
    """Whether ``node`` only computes from ``bound`` names, literals and the pure builtins."""
    if isinstance(node, ast.Name):
        return node.id in bound or node.id in PURE_BUILTINS
    if isinstance(node, ast.Attribute):
        return node.attr in PURE_METHODS and _pure(node.value, bound)
    if isinstance(node, ast.Call):
        return _pure_call(node, bound)
    if isinstance(node, ast.Starred):
        return _pure(node.value, bound)
    return isinstance(node, _OPERATORS) and all(
        _pure(child, bound) for child in ast.iter_child_nodes(node)
    )


def _pure_call(node: ast.Call, bound: set[str]) -> bool:
    """A call of a pure builtin, or of a pure method of a pure value, on pure arguments."""
    if any(k.arg is None for k in node.keywords):
        return False  # a ``**`` spread
    callee = node.func
    if isinstance(callee, ast.Name):
        known = callee.id in PURE_BUILTINS
    else:
        known = isinstance(callee, ast.Attribute) and _pure(callee, bound)
    parts = [*node.args, *(k.value for k in node.keywords)]
    return known and all(_pure(part, bound) for part in parts)
