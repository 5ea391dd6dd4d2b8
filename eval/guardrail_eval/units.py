"""Visible units: the smallest groups of a suite's tests that run on their own.

Asserts of a release suite stand alone, but doctest examples do not: ``>>> it = chunked(xs, 2)``
then ``>>> next(it)`` twice is one sequence, and the second ``next(it)`` taken out of it fails
for the correct function too (on the real-code pool the correct function failed its own visible
test in 50 of 142 queries that way). So a thin-tests draw shows whole units, never single tests:

- test ``i``'s closure is ``i`` and, for every earlier test that touches (reads or binds) a name
  ``i`` reads which an earlier test bound (a doctest's own variable, not the module's function),
  that test's closure; a test whose names cannot be read takes every earlier test with it;
- the units are the closures no other closure contains (a whole example sequence), in the order
  of their last test. The query's ``test_setup`` (its imports) runs with every unit.

A pool may store its units (`guardrail_eval.pool.Query.test_units`; the real-code builder keeps
only the units its canonical passes on their own), and pool validation runs every canonical on
every unit alone (`guardrail_eval.validation`), so every visible draw of one unit is one the
correct code passes; a draw of N units is their union, in suite order.
"""

from __future__ import annotations

import ast
from functools import lru_cache

from guardrail.sandbox.runner.doctesting import names_of

__all__ = ["doctest_source", "suite_units"]

_DOCTEST_CALL = "__doctest_example__"


@lru_cache(maxsize=4096)
def suite_units(tests: tuple[str, ...]) -> tuple[tuple[int, ...], ...]:
    """The units of ``tests`` (see the module): sorted index tuples, covering every test."""
    closures: list[frozenset[int]] = []
    bound: set[str] = set()  # names the tests so far bind
    touched: list[frozenset[str] | None] = []  # each test's names; None: unreadable
    for index, test in enumerate(tests):
        names = _names(test)
        closure = {index}
        if names is None:
            closure.update(range(index))
        else:
            reads, binds = names
            shared = reads & bound
            for earlier, their in enumerate(touched):
                if their is None or their & shared:
                    closure |= closures[earlier]
            bound |= binds
        touched.append(None if names is None else names[0] | names[1])
        closures.append(frozenset(closure))
    maximal = [c for c in closures if not any(c < other for other in closures)]
    unique = sorted(set(maximal), key=lambda c: (max(c), sorted(c)))
    return tuple(tuple(sorted(c)) for c in unique)


def _names(test: str) -> tuple[frozenset[str], frozenset[str]] | None:
    """The names ``test`` reads and binds (a doctest example's own source), or None."""
    try:
        tree = ast.parse(test)
        source = _doctest_source(tree)
        if source is None:
            source = test
        else:
            ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    reads, binds = names_of(source)
    return frozenset(reads), frozenset(binds)


def doctest_source(test: str) -> str | None:
    """The example's source when ``test`` is ``__doctest_example__('source', ...)``, else None."""
    try:
        return _doctest_source(ast.parse(test))
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _doctest_source(tree: ast.Module) -> str | None:
    """The example's source when ``tree`` is ``__doctest_example__('source', ...)``."""
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.Expr):
        return None
    call = tree.body[0].value
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and call.func.id == _DOCTEST_CALL
        and call.args
        and isinstance(call.args[0], ast.Constant)
        and isinstance(call.args[0].value, str)
    ):
        return None
    return call.args[0].value
