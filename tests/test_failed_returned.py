"""What a failing assert's checked call returned, as the judge records it (`runner.returned`).

An agent whose test every candidate fails must tell a wrong test from missing code, so each
``FAIL`` carries the value the call under test gave: the judge's own repr of plain data, never a
candidate's ``__repr__``, and nothing for a test that passed, raised, or checked no call.
"""

from __future__ import annotations

import ast

import pytest

from guardrail.gate import Gate
from guardrail.sandbox.runner.returned import rewrite
from guardrail.spec import Spec
from guardrail.verdict import TestOutcome

pytestmark = pytest.mark.docker

DOUBLE = "def double(x):\n    return x * 2\n"


def _outcome(gate: Gate, code: str, test: str) -> TestOutcome:
    (verdict,) = gate.verify([code], Spec(tests=(test,), entry_point="double"))
    (outcome,) = verdict.tests
    return outcome


@pytest.mark.parametrize(
    ("test", "shown"),
    [
        ("assert double(2) == 5", "4"),
        ("assert 5 == double(2)", "4"),
        ("assert not double(2)", "4"),
        ("assert double(2) in (1, 2, 3)", "4"),
        ("assert isinstance(double('a'), int)", "'aa'"),
        ("assert double([1]) == [1]", "[1, 1]"),
        ("x = 3\nassert double(x) == 6\nassert double(x + 1) == 9", "8"),
        ("for n in (1, 2):\n    assert double(n) == 2", "4"),
    ],
)
def test_a_failing_assert_carries_what_the_call_returned(gate: Gate, test: str, shown: str) -> None:
    outcome = _outcome(gate, DOUBLE, test)
    assert outcome.outcome == "FAIL"
    assert outcome.returned is not None
    assert (outcome.returned.kind, outcome.returned.text) == ("value", shown)


def test_equal_values_share_a_key_across_candidates(gate: Gate) -> None:
    codes = [DOUBLE, "def double(x):\n    return x + x\n", "def double(x):\n    return 4.0\n"]
    verdicts = gate.verify(codes, Spec(tests=("assert double(2) == 5",), entry_point="double"))
    keys = {v.tests[0].returned.key for v in verdicts if v.tests[0].returned is not None}
    assert len(keys) == 1  # 4, 4 and 4.0 compare equal: one answer, three candidates


def test_nothing_is_recorded_when_the_test_passes_or_the_call_raises(gate: Gate) -> None:
    assert _outcome(gate, DOUBLE, "assert double(2) == 4").returned is None
    raised = _outcome(gate, "def double(x):\n    raise TypeError('no')\n", "assert double(2) == 4")
    assert raised.outcome == "ERROR:TypeError"
    assert raised.returned is None


def test_a_candidate_object_is_never_shown_through_its_own_repr(gate: Gate) -> None:
    code = (
        "class Sly:\n    def __repr__(self):\n        return '\\x1b[2J5'\n"
        "def double(x):\n    return Sly()\n"
    )
    outcome = _outcome(gate, code, "assert double(2) is None")
    assert outcome.outcome == "FAIL"
    assert outcome.returned is not None
    assert outcome.returned.kind == "unjudged"
    assert "5" not in outcome.returned.text


def test_an_earlier_assert_value_is_not_blamed_for_a_later_failure(gate: Gate) -> None:
    outcome = _outcome(gate, DOUBLE, "assert double(2) == 4\nassert False, 'checks no call'")
    assert outcome.outcome == "FAIL"
    assert outcome.returned is None  # not the 4 of the assert before, which passed


def test_rewrite_keeps_the_tests_line_numbers() -> None:
    tree = rewrite("x = 1\n\nassert f(x) == 2")
    asserts = [node for node in ast.walk(tree) if isinstance(node, ast.Assert)]
    assert [node.lineno for node in asserts] == [3]
    assert "__returned__(f(x))" in ast.unparse(tree)
