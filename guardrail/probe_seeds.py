"""Where probe inputs start (`guardrail.probes`): the constant calls of tests and doctests.

``test_calls``: calls of the spec's entry point in its tests (and in the doctest examples the
tests carry) whose arguments are all constants: literals, names the setup or an earlier statement
bound to one, pure expressions of them (`guardrail.constants`), and the items of a loop over a
constant; a callable argument counts when it is a pure function (`guardrail.probe_functions`:
``lambda c: c.isupper()``, ``len``), kept as its text. ``doctest_calls``: such calls in the
``>>>`` examples of a candidate's docstrings. Nothing is run: every value is read from the
syntax tree.
"""

from __future__ import annotations

import ast
import doctest
from collections.abc import Iterator
from typing import Any

from guardrail.constants import NotConstantError, constant_value
from guardrail.precheck import MAX_PARSE_BYTES, capped_size
from guardrail.probe_functions import pure_function
from guardrail.sandbox.runner.doctesting import example_sources
from guardrail.sandbox.runner.static import plausible_functions
from guardrail.spec import Spec

__all__ = ["Call", "doctest_calls", "parsed", "test_calls"]

Call = tuple[list[Any], list[tuple[str, Any]]]  # positional values, (keyword, value) pairs
_Function = ast.FunctionDef | ast.AsyncFunctionDef


def parsed(code: str) -> ast.Module | None:
    if capped_size(code, MAX_PARSE_BYTES) > MAX_PARSE_BYTES:
        return None
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _literal_calls(tree: ast.AST, names: set[str], known: dict[str, Any]) -> Iterator[Call]:
    """Calls of one of ``names`` whose arguments are all constants, in source order; a name
    ``known`` binds (the setup's or an earlier statement's ``xs = [3, 1]``) counts as one."""
    for node in sorted(ast.walk(tree), key=_position):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id not in names or any(k.arg is None for k in node.keywords):
            continue  # a ``**kwargs`` spread is no literal call
        try:
            args = [_argument(arg, known) for arg in node.args]
            kwargs = [(str(k.arg), _argument(k.value, known)) for k in node.keywords]
        except NotConstantError:  # a starred argument, a value computed by code
            continue
        yield args, kwargs


def _argument(node: ast.expr, known: dict[str, Any]) -> Any:
    """A constant's value, or a pure function (`guardrail.probe_functions`) as its text."""
    try:
        return constant_value(node, known)
    except NotConstantError:
        function = pure_function(node)
        if function is None:
            raise
        return function


_LOOPED = 3  # items of a constant loop whose calls are seeds


def _loop_calls(tree: ast.Module, names: set[str], known: dict[str, Any]) -> list[Call]:
    """Calls in the body of a top-level ``for`` over a constant (``for n, bits in
    EXPECTED.items():``), with the loop's names bound to each of its first items."""
    found: list[Call] = []
    for loop in tree.body:
        if not isinstance(loop, ast.For) or loop.orelse:
            continue
        try:
            items = list(_iterated(loop.iter, known))[:_LOOPED]
        except NotConstantError:
            continue
        for item in items:
            bound = dict(known)
            if not _unpack(loop.target, item, bound):
                break
            for statement in loop.body:
                found += _literal_calls(statement, names, bound)
    return found


def _iterated(node: ast.expr, known: dict[str, Any]) -> Any:
    """The constant a loop iterates: a constant, or a constant dict's items, keys or values."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("items", "keys", "values")
        and not node.args
    ):
        mapping = constant_value(node.func.value, known)
        if type(mapping) is dict:
            return getattr(mapping, node.func.attr)()
        raise NotConstantError("not a dict")
    value = constant_value(node, known)
    if isinstance(value, list | tuple | range | dict | str):
        return value
    raise NotConstantError("not iterable in a known order")


def _unpack(target: ast.expr, value: Any, bound: dict[str, Any]) -> bool:
    """Bind a loop target (a name, or a tuple of names) to ``value``; False if it cannot be."""
    if isinstance(target, ast.Name):
        bound[target.id] = value
        return True
    if isinstance(target, ast.Tuple | ast.List) and isinstance(value, tuple | list):
        if len(target.elts) != len(value):
            return False
        return all(_unpack(t, v, bound) for t, v in zip(target.elts, value, strict=True))
    return False


def _bind_constants(tree: ast.Module, known: dict[str, Any]) -> None:
    """Record the top-level ``name = <constant>`` bindings of ``tree`` into ``known`` (and
    forget a name rebound to anything else), in order."""
    for statement in tree.body:
        if not isinstance(statement, ast.Assign):
            continue
        for target in statement.targets:
            if isinstance(target, ast.Name):
                try:
                    known[target.id] = constant_value(statement.value, known)
                except NotConstantError:
                    known.pop(target.id, None)


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def test_calls(spec: Spec) -> list[Call]:
    """Constant calls of the entry point in the tests (and the doctest examples they carry),
    with the names the setup and earlier tests bind to constants: the judge runs them in one
    namespace, in order."""
    found: list[Call] = []
    known: dict[str, Any] = {}
    setup = parsed(spec.setup)
    if setup is not None:
        _bind_constants(setup, known)
    for test in spec.tests:
        tree = ast.parse(test)  # the spec parsed it when it was built
        found += _statement_calls(tree, {spec.entry_point}, known)
        for source in example_sources(tree):
            example = parsed(source)
            if example is not None:
                found += _statement_calls(example, {spec.entry_point}, known)
    return found


def _statement_calls(tree: ast.Module, names: set[str], known: dict[str, Any]) -> list[Call]:
    """The constant calls of ``tree``'s statements in order, each seeing the names the ones
    before it bound (``xs = [3, 1]`` then ``sort_in_place(xs)``), and recording its own."""
    found: list[Call] = []
    for statement in tree.body:
        single = ast.Module(body=[statement], type_ignores=[])
        found += _literal_calls(statement, names, known)
        found += _loop_calls(single, names, known)
        _bind_constants(single, known)
    return found


def doctest_calls(tree: ast.Module, spec: Spec) -> list[Call]:
    """Literal calls in the candidate's docstrings of the entry point, or of its one plausible
    function when it defines the entry point under another name (the gate's alias)."""
    names = {spec.entry_point}
    defined = {n.name for n in tree.body if isinstance(n, _Function | ast.ClassDef)}
    if spec.entry_point not in defined:
        names |= set(plausible_functions(ast.unparse(tree))[:1])
    found: list[Call] = []
    parser = doctest.DocTestParser()
    for node in ast.walk(tree):
        if not isinstance(node, _Function | ast.ClassDef | ast.Module):
            continue
        docstring = ast.get_docstring(node, clean=True)
        if not docstring or ">>>" not in docstring:
            continue
        try:
            examples = parser.get_examples(docstring)
        except ValueError:  # a malformed example block
            continue
        for example in examples:
            source = parsed(example.source)
            if source is not None:
                found += _literal_calls(source, names, {})
    return found
