"""What the call a failing assert checked gave, recorded by the judge: ``__returned__``.

When every candidate fails an agent's own test, the agent must tell a wrong test (all candidates
agree on another value) from missing code (they disagree, or raise). So the judge rewrites each
``assert`` of a test before running it (`rewrite`): the operand that holds the call under test
(``f(2)`` in ``assert f(2) == 5``, ``assert 5 == f(2)``, ``assert f(2)``, ``assert not f(2)``,
``assert isinstance(f(2), int)``) is wrapped in ``__returned__(...)``, which records the value
and hands it on unchanged, and ``__returned__.start()`` opens every assert, so a value never
outlives its assert. Evaluation order and count are the original's: nothing is called twice.

The record is the judge's own, like an observation (`observing`): plain data (exact builtin
types, no handle anywhere) becomes the judge's ``repr`` capped and its equality key; a candidate
object (a handle) is ``unjudged`` and shown as such, never through its own ``repr``. Only the
judge reads the record, and only on a test it judged ``FAIL`` (`judge.Judge._run_test`).
"""

from __future__ import annotations

import ast
import builtins
from typing import Any

from .codec import Unserialisable, encode
from .observing import key_of, shown

__all__ = ["RETURNED", "Returned", "rewrite"]

RETURNED = "__returned__"  # the judge's name for it in the tests' namespace


class Returned:
    """``__returned__`` for one job: the value of the current assert's checked call."""

    def __init__(self) -> None:
        self.value: Any = None
        self.recorded = False

    def __call__(self, value: Any) -> Any:
        self.value, self.recorded = value, True
        return value

    def start(self) -> None:
        """Forget the previous assert's value (its assert passed, or this one checks another)."""
        self.value, self.recorded = None, False

    def take(self) -> dict[str, Any] | None:
        """The record as an observation (None when the failing assert recorded nothing)."""
        value, recorded = self.value, self.recorded
        self.start()
        if not recorded:
            return None
        try:
            encode(value)  # no hook: a handle or a judge object anywhere in it is refused
            key = key_of(value)
        except (Unserialisable, RecursionError):
            return {"kind": "unjudged", "text": "a candidate object (not plain data)"}
        return {"kind": "value", "text": shown(value), "key": key}


def rewrite(test: str) -> ast.Module:
    """``test`` parsed, each ``assert`` opened by ``__returned__.start()`` and its checked
    operand wrapped in ``__returned__(...)``; line numbers stay the test's own."""
    tree = ast.parse(test)
    _Asserts().visit(tree)  # in place: the module node itself is never replaced
    return ast.fix_missing_locations(tree)


class _Asserts(ast.NodeTransformer):
    def visit_Assert(self, node: ast.Assert) -> list[ast.stmt]:
        self.generic_visit(node)
        start = ast.Expr(
            ast.Call(ast.Attribute(ast.Name(RETURNED, ast.Load()), "start", ast.Load()), [], [])
        )
        node.test = _wrapped(node.test)
        return [ast.copy_location(start, node), node]


def _wrapped(test: ast.expr) -> ast.expr:
    """``test`` with its checked operand recorded (``test`` itself when none is clear)."""
    if isinstance(test, ast.Compare):
        operands = [test.left, *test.comparators]
        chosen = next((i for i, o in enumerate(operands) if _calls(o)), 0)
        operands[chosen] = _record(operands[chosen])
        test.left, test.comparators = operands[0], operands[1:]
        return test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test.operand = _wrapped(test.operand)
        return test
    if isinstance(test, ast.Call):
        if _builtin(test.func) and test.args and _calls(test.args[0]):
            test.args[0] = _record(test.args[0])  # isinstance(f(x), int), len(f(x)) ...
            return test
        return _record(test)
    return test


def _calls(node: ast.expr) -> bool:
    return any(isinstance(inner, ast.Call) for inner in ast.walk(node))


def _builtin(func: ast.expr) -> bool:
    return isinstance(func, ast.Name) and hasattr(builtins, func.id)


def _record(node: ast.expr) -> ast.expr:
    return ast.copy_location(ast.Call(ast.Name(RETURNED, ast.Load()), [node], []), node)
