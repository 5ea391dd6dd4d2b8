"""`Spec`: what a candidate must satisfy to be verified.

A spec is a list of test statements (each a single ``assert`` line or a multi-line statement such
as a ``try``/``except`` block), optional setup code that runs before the tests in the judge, and the
name of the function the tests call (the entry point). Everything is parsed when the spec is built,
so an unparseable test is a `SpecError` before any container starts.

Tests and setup together take at most `MAX_SPEC_BYTES` (256 KiB): every job carries them to the
sandbox next to the candidate, so a bigger spec is the spec's problem, never each candidate's
``too_large``; and the host parses them, at a cost of up to ~500 bytes of memory per byte.
"""

from __future__ import annotations

import ast
import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, field_validator, model_validator

from guardrail.errors import SpecError
from guardrail.precheck import MAX_PARSE_BYTES, at_line, capped_size, parse
from guardrail.textfiles import read_text

__all__ = ["MAX_SPEC_BYTES", "Spec", "infer_entry_point", "spec_size_problem"]

MAX_SPEC_BYTES = MAX_PARSE_BYTES  # the most the host parses at once
DOCTEST_RUNNER = "__doctest_example__"  # the judge's doctest example runner, never an entry point


class Spec(BaseModel):
    """Tests that decide whether a candidate is correct.

    Attributes:
        tests: test statements, each parsed on its own; order is kept and reported.
        setup: code run in the judge before the tests (imports, helpers, fixtures).
        entry_point: the name the tests call; a candidate defining its function under another
            name is bound to it when that is the only plausible function (the alias is recorded).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    tests: tuple[str, ...]
    setup: str = ""
    entry_point: str

    @field_validator("entry_point")
    @classmethod
    def _entry_point_is_identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"entry point {value!r} is not a Python identifier")
        return value

    @model_validator(mode="after")
    def _everything_parses(self) -> Spec:
        too_large = spec_size_problem(self.tests, self.setup)
        if too_large is not None:
            raise ValueError(too_large)
        _parse_or_raise(self.setup, "setup")
        for number, test in enumerate(self.tests, start=1):
            if not test.strip():
                raise ValueError(f"test {number} is empty")
            _parse_or_raise(test, f"test {number}")
        return self

    @classmethod
    def build(cls, tests: Iterable[str], entry_point: str, setup: str = "") -> Spec:
        """Build a spec, turning validation problems into a `SpecError` with a clear message."""
        try:
            return cls(tests=tuple(tests), entry_point=entry_point, setup=setup)
        except ValueError as exc:  # pydantic.ValidationError is a ValueError
            raise SpecError(_first_message(exc)) from None

    @classmethod
    def from_tests(
        cls, tests: Iterable[str], entry_point: str | None = None, setup: str = ""
    ) -> Spec:
        """Like `build`, inferring the entry point from the tests when it is not given.

        The inferred entry point is the first function the tests call that is neither a builtin
        nor defined or imported by the setup (``assert add(1, 2) == 3`` gives ``add``).
        """
        tests = tuple(tests)
        if not tests:
            raise SpecError("there are no tests: the list is empty (give at least one assert)")
        if entry_point is None:
            entry_point = infer_entry_point(tests, setup)
        return cls.build(tests, entry_point, setup)

    @classmethod
    def from_python(
        cls, source: str, entry_point: str | None = None, *, origin: str = "<tests>"
    ) -> Spec:
        """A spec from Python source whose top-level statements are the tests.

        Leading imports (and ``from`` imports) become the setup; every later top-level statement is
        one test, so a multi-line ``try`` block stays one test. Without ``entry_point`` the name
        is inferred from the tests (see `from_tests`).
        """
        try:
            module = parse(source, filename=origin)
        except SyntaxError as exc:
            where = f"{origin}:{exc.lineno}" if exc.lineno else origin
            raise SpecError(f"{where}: tests do not parse: {exc.msg}") from None
        lines = source.splitlines()
        setup: list[str] = []
        tests: list[str] = []
        for node in module.body:
            text = _statement_source(lines, node)
            if not tests and isinstance(node, ast.Import | ast.ImportFrom):
                setup.append(text)
            else:
                tests.append(text)
        if not tests:
            raise SpecError(f"{origin}: no test statements found (only imports or nothing)")
        try:
            return cls.from_tests(tests, entry_point, "\n".join(setup))
        except SpecError as exc:
            raise SpecError(f"{origin}: {exc}") from None

    @classmethod
    def from_file(cls, path: Path, entry_point: str | None = None) -> Spec:
        """A spec from a ``.py`` file (see `from_python`) or a ``.json`` list of test strings."""
        text = read_text(path, SpecError, "tests", max_bytes=MAX_SPEC_BYTES)
        if path.suffix == ".json":
            try:
                data: Any = json.loads(text)
            except json.JSONDecodeError as exc:
                raise SpecError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
            except RecursionError:  # [[[[...]]]] nested past the decoder's depth
                raise SpecError(f"{path}: not valid JSON: nested too deeply") from None
            if not isinstance(data, list) or not all(isinstance(t, str) for t in data):
                raise SpecError(f"{path}: expected a JSON list of test strings")
            try:
                return cls.from_tests(data, entry_point)
            except SpecError as exc:
                raise SpecError(f"{path}: {exc}") from None
        return cls.from_python(text, entry_point, origin=str(path))

    @property
    def sha256(self) -> str:
        """Stable digest of the spec, used in verdict cache keys."""
        canonical = json.dumps(
            {"tests": list(self.tests), "setup": self.setup, "entry_point": self.entry_point},
            sort_keys=True,
            ensure_ascii=False,
        )
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def infer_entry_point(tests: Iterable[str], setup: str = "") -> str:
    """The first called name in ``tests`` that is not a builtin nor bound by ``setup`` or the tests.

    When the tests call nothing unbound, the first unbound name they pass to a call
    (``map(is_prime, xs)``). Doctest tests (``__doctest_example__(source, ...)``) are read by
    their example sources: ``>>> p = peekable([1])`` gives ``peekable``.
    """
    import builtins

    bound = set(dir(builtins))
    try:
        for node in ast.walk(parse(setup)):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                bound.add(node.id)
    except SyntaxError as exc:
        raise SpecError(f"setup does not parse{at_line(exc)}: {exc.msg}") from None
    trees = []
    for number, test in enumerate(tests, start=1):
        try:
            trees.append(parse(test))
        except SyntaxError as exc:
            raise SpecError(f"test {number} does not parse{at_line(exc)}: {exc.msg}") from None
    # A doctest example's source is a string the test hands to the judge's runner: what the
    # example calls is what the tests call, never the runner itself.
    trees = [each for tree in trees for each in (tree, *_example_trees(tree))]
    bound.add(DOCTEST_RUNNER)
    nodes = [node for tree in trees for node in sorted(ast.walk(tree), key=_position)]
    # Names the tests bind themselves (``xs = [3, 1]``) are not the function under test.
    bound |= {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    called = [n.func.id for n in nodes if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)]
    # A function passed rather than called (``map(is_prime, xs)``) counts when nothing is called.
    passed = [
        arg.id
        for n in nodes
        if isinstance(n, ast.Call)
        for arg in n.args
        if isinstance(arg, ast.Name)
    ]
    for name in (*called, *passed):
        if name not in bound:
            return name
    raise SpecError(
        "cannot tell which function the tests call; name it (--entry-point, or entry_point=)"
    )


def _example_trees(tree: ast.Module) -> list[ast.Module]:
    # Imported here: guardrail.sandbox imports this module (its Job carries a Spec).
    from guardrail.sandbox.runner.doctesting import example_sources

    found = []
    for source in example_sources(tree):
        try:
            found.append(parse(source))
        except SyntaxError:
            continue  # the example fails in the judge, as doctest fails it
    return found


def _position(node: ast.AST) -> tuple[int, int]:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def spec_size_problem(tests: Iterable[str], setup: str = "") -> str | None:
    """Why tests and setup are over `MAX_SPEC_BYTES` of UTF-8 together, or None."""
    size = 0
    for text in (setup, *tests):
        size += capped_size(text, MAX_SPEC_BYTES)
        if size > MAX_SPEC_BYTES:
            return (
                f"the tests and setup take at least {size:,} bytes; a spec may take at most"
                f" {MAX_SPEC_BYTES:,}"
            )
    return None


def _parse_or_raise(source: str, what: str) -> None:
    try:
        parse(source)
    except SyntaxError as exc:
        shown = source if len(source) <= 200 else source[:200] + "..."
        raise ValueError(f"{what} does not parse{at_line(exc)}: {exc.msg}: {shown!r}") from None


def _statement_source(lines: list[str], node: ast.stmt) -> str:
    end = node.end_lineno or node.lineno
    first = node.lineno
    # Decorators belong to the statement they decorate.
    decorators = getattr(node, "decorator_list", [])
    if decorators:
        first = min(first, *(d.lineno for d in decorators))
    return "\n".join(lines[first - 1 : end])


def _first_message(exc: ValueError) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):
        first = errors()[0]
        location = ".".join(str(part) for part in first.get("loc", ()))
        message = str(first.get("msg", exc)).removeprefix("Value error, ")
        return f"{location}: {message}" if location else message
    return str(exc)
