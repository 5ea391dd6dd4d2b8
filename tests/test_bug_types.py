"""A canonical verifies; a single-line mutant of each of the six bug types fails, test named."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.gate import Gate
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

pytestmark = pytest.mark.docker

BUG_TYPES = Path(__file__).parent / "snippets" / "bug_types"

# The test each mutant must fail (it may fail others too).
EXPECTED_FAILURE = {
    "off_by_one": "assert window_sums([1, 2, 3, 4], 2) == [3, 5, 7]",
    "off_by_one_boundary": "assert window_sums([1, 2, 3], 3) == [6]",
    "swap_arguments": "assert window_sums([1, 2, 3], 1) == [1, 2, 3]",
    "remove_edge_case_check": "try:\n    window_sums([1], 0)",
    "wrong_comparison": "assert window_sums([1, 2, 3], 1) == [1, 2, 3]",
    "wrong_operator": "assert window_sums([1, 2, 3, 4], 2) == [3, 5, 7]",
}


@pytest.fixture
def spec() -> Spec:
    return Spec.from_file(BUG_TYPES / "tests.py")


def test_canonical_verifies(gate: Gate, spec: Spec) -> None:
    (verdict,) = gate.verify([(BUG_TYPES / "canonical.py").read_text()], spec)
    assert verdict.status is Status.VERIFIED, verdict
    assert verdict.reason is Reason.PASSED
    assert verdict.outcomes == ["pass"] * 6


@pytest.mark.parametrize("bug_type", sorted(EXPECTED_FAILURE))
def test_single_line_mutant_fails_with_the_failing_test_named(
    gate: Gate, spec: Spec, bug_type: str
) -> None:
    code = (BUG_TYPES / f"{bug_type}.py").read_text()
    (verdict,) = gate.verify([code], spec)
    assert verdict.status is Status.FAILED, verdict
    assert verdict.reason is Reason.TESTS_FAILED
    assert any(test.startswith(EXPECTED_FAILURE[bug_type]) for test in verdict.failed_tests)
    # A near-clone: it still passes something, which is why similarity cannot tell it apart.
    assert verdict.passed_tests
    failing = next(t for t in verdict.tests if not t.passed)
    assert failing.outcome == "FAIL" or failing.outcome.startswith("ERROR:")
