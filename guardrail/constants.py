"""The value of a constant expression in a spec's tests, computed without running any code.

Probes (`guardrail.probes`) start from the calls the tests make; their arguments are often not
bare literals but pure expressions of them (``count_set_bits(2**40 - 1)``, ``paginate(
list(range(10)), 2, 3)``) or names the setup bound to one (``EXPECTED = {0: 0, 7: 3}``). This
evaluates such expressions on the host: literals, names already known, arithmetic on numbers,
repetition and concatenation of sequences, and a few pure builtins (``list``, ``range``,
``sorted``, ``len``...) on plain data; with every size capped (no ``10**10**9``, no list of a
billion items). Anything else is `NotConstantError`: the call is not a probe seed.
"""

from __future__ import annotations

import ast
from typing import Any

__all__ = ["NotConstantError", "constant_value"]


class NotConstantError(Exception):
    """An expression whose value is not plain constant data, or too big to probe with."""


_MAX_BITS = 4096
_MAX_ITEMS = 1000
_BUILDERS: dict[str, Any] = {
    "list": list,
    "tuple": tuple,
    "set": set,
    "frozenset": frozenset,
    "sorted": sorted,
    "range": range,
    "reversed": lambda items: list(reversed(items)),
    "str": str,
    "int": int,
    "float": float,
    "bool": bool,
    "abs": abs,
    "len": len,
}
_OPERATORS: dict[type[ast.operator], Any] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
    ast.Div: lambda a, b: a / b,
    ast.BitOr: lambda a, b: a | b,
    ast.BitAnd: lambda a, b: a & b,
    ast.BitXor: lambda a, b: a ^ b,
}

_UNARY: dict[type[ast.unaryop], Any] = {
    ast.USub: lambda a: -a,
    ast.UAdd: lambda a: +a,
    ast.Invert: lambda a: ~a,
}


def constant_value(node: ast.expr, names: dict[str, Any]) -> Any:
    """The value of a constant expression of the tests (``2**40 - 1``, ``list(range(10))``,
    ``'ab' * 3``, a name the setup or test bound to one), computed without running any code
    but these few pure builtins on plain data, with sizes capped. Raises `NotConstantError`."""
    try:
        value = _evaluate(node, names)
    except (ValueError, TypeError, ArithmeticError, MemoryError, RecursionError):
        raise NotConstantError from None
    _check_size(value)
    return value


def _evaluate(node: ast.expr, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise NotConstantError(node.id)
        return names[node.id]
    if isinstance(node, ast.List | ast.Tuple | ast.Set | ast.Dict):
        return _display(node, names)
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_checked(_evaluate(node.operand, names)))
    if isinstance(node, ast.BinOp):
        return _binary(node, names)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _BUILDERS
        and node.func.id not in names
        and not node.keywords
    ):
        args = [_checked(_evaluate(arg, names)) for arg in node.args]
        result = _BUILDERS[node.func.id](*args)
        return list(result) if type(result) is range and node.func.id != "range" else result
    raise NotConstantError(type(node).__name__)


def _display(node: ast.List | ast.Tuple | ast.Set | ast.Dict, names: dict[str, Any]) -> Any:
    if isinstance(node, ast.Dict):
        if None in node.keys:  # a ``**spread``
            raise NotConstantError("a dict spread")
        pairs = zip(node.keys, node.values, strict=True)
        return {_evaluate(k, names): _evaluate(v, names) for k, v in pairs if k is not None}
    items = [_checked(_evaluate(item, names)) for item in node.elts]
    return {ast.List: list, ast.Tuple: tuple, ast.Set: set}[type(node)](items)


def _binary(node: ast.BinOp, names: dict[str, Any]) -> Any:
    left = _checked(_evaluate(node.left, names))
    right = _checked(_evaluate(node.right, names))
    if isinstance(node.op, ast.Pow | ast.LShift):
        if type(left) is not int or type(right) is not int or not 0 <= right <= _MAX_BITS:
            raise NotConstantError("a power or shift out of range")
        if left.bit_length() * max(right, 1) > _MAX_BITS and isinstance(node.op, ast.Pow):
            raise NotConstantError("a power too large")
        return left**right if isinstance(node.op, ast.Pow) else left << right
    if isinstance(node.op, ast.RShift) and type(left) is int and type(right) is int:
        return left >> right
    if isinstance(node.op, ast.Mult) and (type(left) is int or type(right) is int):
        count = left if type(left) is int else right
        other = right if type(left) is int else left
        if isinstance(other, str | bytes | list | tuple) and count * len(other) > _MAX_ITEMS:
            raise NotConstantError("a repeated sequence too long")
    operator = _OPERATORS.get(type(node.op))
    if operator is None:
        raise NotConstantError(type(node.op).__name__)
    return operator(left, right)


def _checked(value: Any) -> Any:
    _check_size(value)
    return value


def _check_size(value: Any) -> None:
    if type(value) is int and value.bit_length() > _MAX_BITS:
        raise NotConstantError("an integer too large")
    if type(value) is range and len(value) > _MAX_ITEMS:
        raise NotConstantError("a range too long")
    sized = isinstance(value, str | bytes | list | tuple | set | frozenset | dict)
    if sized and len(value) > _MAX_ITEMS:
        raise NotConstantError("a collection too long")
