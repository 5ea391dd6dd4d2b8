"""Doctest examples in a docstring, turned into test statements a `Spec` can run.

Each example is read with the standard library's `doctest.DocTestParser` and becomes:

* ``>>> expr`` with expected output that is a Python literal -> ``assert repr(expr) ==
  '<output>'``: compared by the printed text, as doctest does, so ``1`` does not accept ``True``;
* ``>>> print(x)`` with expected output -> ``assert str(x) == '<output>'``;
* ``>>> expr`` expected to raise a builtin exception -> a ``try``/``except`` test that also checks
  the message (``Exception`` and ``BaseException`` are too broad to judge anything: skipped);
* a statement, or an expression with no output (``>>> xs = [3, 1]``, ``>>> xs.sort()``) -> context:
  it is prepended to every later test, so each test is self-contained and runs in any order;
* ``>>> import m`` -> setup.

Examples are skipped, never guessed at, when they cannot be judged as plain data: output that is
not a Python literal (``Point(x=1)``, ``<object at 0x...>``), examples carrying doctest directives
(``# doctest: +SKIP``, ``+ELLIPSIS``...), names that are neither builtins, the function itself nor
bound by earlier examples, and tests that never call the function (``callable(f)`` passes for any
code).
"""

from __future__ import annotations

import ast
import builtins
import doctest
from dataclasses import dataclass, field

__all__ = ["DoctestTests", "doctest_tests"]

_BUILTINS = frozenset(dir(builtins))


@dataclass(frozen=True)
class DoctestTests:
    """Tests and setup extracted from one docstring, and how many examples were skipped."""

    tests: list[str] = field(default_factory=list)
    setup: str = ""
    skipped: int = 0


def doctest_tests(docstring: str, entry_point: str) -> DoctestTests:
    """Turn the doctest examples of ``entry_point``'s docstring into test statements."""
    try:
        examples = doctest.DocTestParser().get_examples(docstring)
    except ValueError:  # inconsistent indentation and the like: not a doctest we can read
        return DoctestTests()
    state = _State(entry_point)
    for example in examples:
        state.take(example)
    return DoctestTests(state.tests, "\n".join(state.setup), state.skipped)


class _State:
    def __init__(self, entry_point: str) -> None:
        self.entry_point = entry_point
        self.known = set(_BUILTINS) | {entry_point}
        self.context: list[str] = []
        self.setup: list[str] = []
        self.tests: list[str] = []
        self.skipped = 0

    def take(self, example: doctest.Example) -> None:
        source = example.source.rstrip("\n")
        try:
            module = ast.parse(source)
        except SyntaxError:
            self.skipped += 1
            return
        if example.options or not module.body or not _names(module) <= self.known | _bound(module):
            self.skipped += 1
            return
        if all(isinstance(node, ast.Import | ast.ImportFrom) for node in module.body):
            self.setup.append(source)
            self.known |= _bound(module)
            return
        test = self._test_for(example, module, source)
        if test is None:
            self.skipped += 1
        elif test:
            self.tests.append(test)

    def _test_for(self, example: doctest.Example, module: ast.Module, source: str) -> str | None:
        """The test text, ``""`` when the example became context, ``None`` to skip it."""
        want = example.want.rstrip("\n")
        single = module.body[0] if len(module.body) == 1 else None
        expression = single.value if isinstance(single, ast.Expr) else None
        if example.exc_msg is not None:
            check = _raises(source, example.exc_msg) if expression is not None else None
        elif not want:
            self.context.append(source)
            self.known |= _bound(module)
            return ""
        elif expression is None:
            return None  # a statement with output (a loop that prints): nothing to compare
        elif isinstance(expression, ast.Call) and _is_print(expression):
            argument = ast.get_source_segment(source, expression.args[0]) or ""
            check = f"assert str({argument}) == {want!r}"
        else:
            check = _equals(ast.get_source_segment(source, expression) or "", want)
        if check is None:
            return None
        test = "\n".join([*self.context, check])
        # Only a test that calls the function tests it: `callable(f)` or `f.__name__` pass for
        # any code at all.
        return test if _calls(ast.parse(test), self.entry_point) else None


def _equals(expression: str, want: str) -> str | None:
    """Compare as doctest does, by the printed text: ``1`` must not accept ``True`` or ``1.0``."""
    try:
        ast.literal_eval(want)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return f"assert repr({expression}) == {want!r}"


def _raises(source: str, exc_msg: str) -> str | None:
    """A try block expecting the builtin exception, with doctest's message, and nothing broader.

    ``Exception`` or ``BaseException`` would accept whatever broken code raises (a NameError from
    a missing helper), so such examples are skipped. The message is compared as the exception's
    text or its first argument (a KeyError prints its key quoted).
    """
    name, _, message = exc_msg.partition(":")
    name, message = name.strip(), message.strip()
    exception = getattr(builtins, name, None)
    if not (isinstance(exception, type) and issubclass(exception, BaseException)):
        return None
    if exception in (Exception, BaseException):
        return None
    body = "\n".join(f"    {line}" for line in source.splitlines())
    check = (
        f"    assert {message!r} in (str(_error), *map(str, _error.args[:1]))"
        if message
        else "    pass"
    )
    return (
        f"try:\n{body}\nexcept {name} as _error:\n{check}\n"
        f"else:\n    raise AssertionError('expected {name}')"
    )


def _is_print(expression: ast.Call) -> bool:
    return (
        isinstance(expression.func, ast.Name)
        and expression.func.id == "print"
        and len(expression.args) == 1
        and not expression.keywords
        and not isinstance(expression.args[0], ast.Starred)
    )


def _calls(tree: ast.AST, name: str) -> bool:
    """Whether the code calls ``name`` itself (passing it, as in ``callable(f)``, runs nothing)."""
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == name
        for node in ast.walk(tree)
    )


def _names(tree: ast.AST) -> set[str]:
    """Names the code reads."""
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def _bound(tree: ast.AST) -> set[str]:
    """Names the code binds (assignments, loop targets, imports, definitions)."""
    bound: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            bound.add(node.id)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
    return bound
