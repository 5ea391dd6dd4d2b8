"""What the retrieved text itself says of its definition, read from its syntax tree in the
candidate process (`retrieved` takes these before any code of the module runs): the defaults it
writes as literals, and whether it decorates the definition."""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

__all__ = ["decorated_in", "literal_defaults"]

_UNKNOWN = object()  # a default the text writes as an expression, not a literal


def decorated_in(text: str, last: str) -> bool:
    """Whether the retrieved ``text`` decorates its last definition named ``last``."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return False
    kinds = ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef
    found = [node for node in tree.body if isinstance(node, kinds) and node.name == last]
    return bool(found and found[-1].decorator_list)


def literal_defaults(text: str, last: str) -> Callable[[Any], bool]:
    """Whether a function's defaults are those the retrieved ``text`` writes as literals, for
    its definition named ``last`` (any default when the text cannot say: no such definition, or
    an expression that is no literal)."""
    positional: list[Any] = []
    keywords: dict[str, Any] = {}
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        tree = ast.Module(body=[], type_ignores=[])
    found = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == last
    ]
    if found:
        arguments = found[-1].args  # the last one is what the name is bound to
        positional = [_literal(d) for d in arguments.defaults]
        keywords = {
            a.arg: _literal(d)
            for a, d in zip(arguments.kwonlyargs, arguments.kw_defaults, strict=True)
            if d is not None
        }
    same, len_, type_, tuple_, dict_, all_, zip_ = _same, len, type, tuple, dict, all, zip
    unknown = _UNKNOWN

    def match(function: Any) -> bool:
        if not found:
            return True
        held = function.__defaults__ or ()
        held_keywords = function.__kwdefaults__ or {}
        if type_(held) is not tuple_ or type_(held_keywords) is not dict_:
            return False
        if len_(held) != len_(positional) or len_(held_keywords) != len_(keywords):
            return False
        pairs = [*zip_(held, positional, strict=True)]
        pairs += [(held_keywords.get(k), v) for k, v in keywords.items()]
        return all_(v is unknown or same(h, v) for h, v in pairs)

    return match


def _literal(node: ast.expr) -> Any:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _UNKNOWN


def _same(
    value: Any,
    literal: Any,
    *,
    type_: Any = type,
    len_: Any = len,
    all_: Any = all,
    zip_: Any = zip,
    repr_: Any = repr,
) -> bool:
    """``value`` is ``literal`` (a scalar or a tuple of them) in exact type and value; a set, a
    list or a dict, unsure, is taken as the same. Builtins bound at import: this runs after
    the module's code."""
    kind = type_(literal)
    if type_(value) is not kind:
        return False
    if kind is tuple:
        return bool(
            len_(value) == len_(literal)
            and all_(_same(v, item) for v, item in zip_(value, literal, strict=True))
        )
    if kind in (set, frozenset, dict, list):
        return True
    return bool(repr_(value) == repr_(literal))  # exact builtin types: their own repr
