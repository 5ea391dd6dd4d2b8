"""Doctest examples turned into test statements, and those tests judged by the real sandbox."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from guardrail.gate import Gate
from guardrail.index import doctest_tests, split_tree
from guardrail.spec import Spec
from guardrail.verdict import Status

CODEBASE = Path(__file__).parent / "snippets" / "codebase"


def _tests(docstring: str, name: str = "f") -> tuple[list[str], str, int]:
    found = doctest_tests(textwrap.dedent(docstring), name)
    return found.tests, found.setup, found.skipped


def test_literal_outputs_become_equality_and_singletons_identity() -> None:
    tests, setup, skipped = _tests(
        """
        >>> f(2)
        4
        >>> f(2)  # a trailing comment is not part of the expression
        4
        >>> f('a') + 'b'
        'ab'
        >>> f(0)
        True
        >>> f(1) == 2
        False
        >>> f([1,
        ...    2])
        [1, 2]
        """
    )
    assert tests == [
        "assert repr(f(2)) == '4'",
        "assert repr(f(2)) == '4'",
        "assert repr(f('a') + 'b') == \"'ab'\"",
        "assert repr(f(0)) == 'True'",
        "assert repr(f(1) == 2) == 'False'",
        "assert repr(f([1,\n   2])) == '[1, 2]'",
    ]
    assert (setup, skipped) == ("", 0)


def test_print_statements_imports_and_context() -> None:
    tests, setup, skipped = _tests(
        """
        >>> import math
        >>> print(f(3))
        three
        >>> xs = [3, 1]
        >>> f(xs)
        >>> xs
        [1, 3]
        >>> f(math.pi)
        3
        """
    )
    assert setup == "import math"
    assert tests == [
        "assert str(f(3)) == 'three'",
        "xs = [3, 1]\nf(xs)\nassert repr(xs) == '[1, 3]'",
        "xs = [3, 1]\nf(xs)\nassert repr(f(math.pi)) == '3'",
    ]
    assert skipped == 0
    for test in tests:
        Spec.build([test], "f", setup)  # every test parses on its own


def test_builtin_exceptions_become_try_blocks_others_are_skipped() -> None:
    tests, _, skipped = _tests(
        """
        >>> f(-1)
        Traceback (most recent call last):
          ...
        ValueError: negative
        >>> f(-2)
        Traceback (most recent call last):
        MyOwnError: negative
        """
    )
    assert tests == [
        "try:\n    f(-1)\nexcept ValueError as _error:\n"
        "    assert 'negative' in (str(_error), *map(str, _error.args[:1]))\n"
        "else:\n    raise AssertionError('expected ValueError')"
    ]
    assert skipped == 1


def test_examples_that_cannot_be_judged_as_plain_data_are_skipped() -> None:
    tests, _, skipped = _tests(
        """
        >>> f(1)
        Point(x=1, y=2)
        >>> f(2)  # doctest: +SKIP
        4
        >>> helper(f(3))
        9
        >>> y = helper(3)
        >>> f(y)
        3
        >>> for i in range(2):
        ...     print(f(i))
        0
        1
        >>> print(f(1), f(2))
        1 2
        >>> 1 + 1
        2
        >>> f(4)
        16
        """
    )
    assert tests == ["assert repr(f(4)) == '16'"]
    assert skipped == 8


def test_unreadable_docstring_gives_no_tests() -> None:
    assert _tests("   >>> f(1)\n  1\n") == ([], "", 0)


@pytest.mark.docker
def test_every_extracted_doctest_verifies_its_own_function(gate: Gate) -> None:
    """The tests stored for the sample codebase pass on the code they came from, in the sandbox."""
    snippets = [s for s in split_tree(CODEBASE).snippets if s.tests]
    specs = [Spec.build(s.tests, s.entry_point, s.setup) for s in snippets]
    verdicts = gate.verify([s.code for s in snippets], specs)
    failures = {
        s.qualified_name: (v.status, v.message, v.failed_tests)
        for s, v in zip(snippets, verdicts, strict=True)
        if v.status is not Status.VERIFIED
    }
    assert failures == {}
    assert sum(len(v.tests) for v in verdicts) == 26


def test_tests_that_could_pass_for_any_code_are_not_made() -> None:
    tests, _, skipped = _tests(
        """
        >>> callable(f)
        True
        >>> f.__name__
        'f'
        >>> f(-1)
        Traceback (most recent call last):
        Exception: negative
        """
    )
    assert tests == []
    assert skipped == 3


def test_a_value_of_another_type_does_not_pass() -> None:
    (test,), _, _ = _tests(">>> f(1)\n1\n")
    for wrong in (True, 1.0):
        namespace = {"f": lambda _x, wrong=wrong: wrong}
        with pytest.raises(AssertionError):
            exec(test, namespace)
    exec(test, {"f": lambda _x: 1})
