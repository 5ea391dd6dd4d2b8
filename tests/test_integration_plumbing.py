"""`guardrail.integration`: the plumbing both framework integrations share, without a sandbox.

Which tests each candidate is judged by (query, then provider, then stored or doctest, then
none), the check that catches one test passed as a bare string, and the verdict metadata that
travels in Documents and nodes and reads back as the same `Verdict`.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import ValidationError

from guardrail.errors import SpecError
from guardrail.gate import Candidate, GatedCandidate, GateResult, Policy, apply_policy
from guardrail.integration import (
    METADATA_KEY,
    GatePlan,
    check_tests,
    plan_gate,
    public_metadata,
    verdict_from_metadata,
    verdict_metadata,
)
from guardrail.sources import SpecSource
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, TestOutcome, Verdict

CODE = "def is_leap_year(y):\n    return y % 4 == 0\n"
STORED = ["assert is_leap_year(2024) is True", "assert is_leap_year(2023) is False"]
QUERY = ["assert leap(2000) is True"]
PROVIDED = ["assert is_leap_year(1900) is False"]

# One candidate per fallback source: its own tests, its docstring's examples, nothing.
ITEMS = ("doc-stored", "doc-doctest", "doc-none")
CANDIDATES = (
    Candidate(code=CODE, id="stored", score=0.9, metadata={"tests": STORED}),
    Candidate(
        code=CODE, id="doctest", score=0.8, metadata={"tests": STORED, "tests_source": "doctest"}
    ),
    Candidate(code=CODE, id="none", score=0.7),
)


def _refuse(item: str) -> None:
    pytest.fail(f"the provider was asked about {item!r} although the query brought tests")


def test_check_tests_passes_tests_specs_and_none_through_unchanged() -> None:
    spec = Spec.from_tests(STORED)
    assert check_tests(None) is None
    assert check_tests(spec) is spec
    assert check_tests(STORED) is STORED
    assert check_tests(()) == ()


@pytest.mark.parametrize(
    ("tests", "message"),
    [
        ("assert f(1) == 1", "not one string: 'assert f\\(1\\) == 1'; wrap it in a list"),
        ([1, 2], r"list of strings or a Spec, got \[1, 2\]"),
        (42, "got 42"),
        (["assert f(1) == 1", None], "list of strings"),
    ],
)
def test_check_tests_rejects_what_is_not_tests(tests: object, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        check_tests(tests)


def test_check_tests_quotes_a_long_bad_value_briefly() -> None:
    with pytest.raises(TypeError) as caught:
        check_tests([0] * 10_000)
    assert len(str(caught.value)) < 300


def test_query_tests_decide_for_every_candidate_and_the_provider_is_not_asked() -> None:
    plan = plan_gate(ITEMS, CANDIDATES, QUERY, provider=_refuse, setup="import math")
    assert plan.sources == (SpecSource.QUERY,) * 3
    assert set(plan.specs) == {Spec.build(QUERY, "leap", "import math")}
    assert (plan.items, plan.candidates) == (ITEMS, CANDIDATES)


def test_a_query_spec_is_used_as_it_is() -> None:
    spec = Spec.build(["assert check(f)"], "f", setup="def check(g):\n    return g(2) == 3\n")
    plan = plan_gate(ITEMS, CANDIDATES, spec, provider=_refuse)
    assert plan.specs == (spec,) * 3 and plan.sources == (SpecSource.QUERY,) * 3


def test_provider_tests_come_before_stored_tests_and_take_setup_and_entry_point() -> None:
    asked: list[str] = []

    def provider(item: str) -> list[str] | None:
        asked.append(item)
        return PROVIDED if item == "doc-doctest" else None

    plan = plan_gate(
        ITEMS, CANDIDATES, None, provider=provider, setup="import os", entry_point="is_leap_year"
    )
    assert asked == list(ITEMS)
    assert plan.sources == (SpecSource.STORED, SpecSource.PROVIDER, SpecSource.NONE)
    assert plan.specs == (
        Spec.from_tests(STORED),
        Spec.build(PROVIDED, "is_leap_year", "import os"),
        None,
    )


def test_empty_query_tests_turn_query_tests_off_and_an_empty_answer_falls_back() -> None:
    plan = plan_gate(ITEMS, CANDIDATES, [], provider=lambda item: [])
    assert plan.sources == (SpecSource.STORED, SpecSource.DOCTEST, SpecSource.NONE)


def test_a_provider_may_answer_with_a_spec() -> None:
    spec = Spec.build(PROVIDED, "is_leap_year")
    plan = plan_gate(ITEMS, CANDIDATES, None, provider=lambda item: spec)
    assert plan.specs == (spec,) * 3 and plan.sources == (SpecSource.PROVIDER,) * 3


def test_without_query_or_provider_tests_stored_doctest_and_none_in_that_order() -> None:
    plan = plan_gate(ITEMS, CANDIDATES, None)
    assert plan.sources == (SpecSource.STORED, SpecSource.DOCTEST, SpecSource.NONE)
    assert plan.specs == (Spec.from_tests(STORED), Spec.from_tests(STORED), None)


def test_bad_tests_raise_before_anything_runs() -> None:
    with pytest.raises(TypeError, match="wrap it in a list"):
        plan_gate(ITEMS, CANDIDATES, "assert leap(2000)")
    with pytest.raises(TypeError, match="wrap it in a list"):
        plan_gate(ITEMS, CANDIDATES, None, provider=lambda item: "assert leap(2000)")
    with pytest.raises(SpecError):
        plan_gate(ITEMS, CANDIDATES, ["assert leap(2000"])
    broken = Candidate(code=CODE, id="broken", metadata={"tests": "not json, not a list"})
    with pytest.raises(SpecError, match="candidate 'broken'"):
        plan_gate(["doc"], [broken], None)


def test_items_and_candidates_must_pair_up() -> None:
    with pytest.raises(ValueError, match="argument 2 is longer"):
        plan_gate(ITEMS[:2], CANDIDATES, None)


def _verdicts() -> tuple[Verdict, Verdict, Verdict]:
    passed = TestOutcome(test=STORED[0], outcome="pass")
    failed = TestOutcome(test=STORED[1], outcome="FAIL", detail="assert False")
    return (
        Verdict(
            status=Status.FAILED, reason=Reason.TESTS_FAILED, tests=(passed, failed), alias="f"
        ),
        Verdict(status=Status.VERIFIED, reason=Reason.PASSED, tests=(passed,), duration_s=0.25),
        Verdict.unjudged(Status.UNVERIFIABLE, Reason.NO_TESTS, "no tests to run"),
    )


def _result(plan: GatePlan[str], policy: Policy) -> GateResult:
    judged = tuple(
        GatedCandidate(candidate=candidate, verdict=verdict, retrieval_rank=rank)
        for rank, (candidate, verdict) in enumerate(zip(plan.candidates, _verdicts(), strict=True))
    )
    return GateResult(policy=policy, judged=judged, kept=tuple(apply_policy(judged, policy)))


def test_kept_maps_the_policys_order_back_to_items_with_their_metadata() -> None:
    plan = plan_gate(ITEMS, CANDIDATES, None)
    kept = plan.kept(_result(plan, Policy.RERANK))
    assert [item for item, _ in kept] == ["doc-doctest", "doc-none"]  # failed one dropped
    verified, unverifiable = (metadata for _, metadata in kept)
    assert verified["status"] == "verified" and verified["verified"] is True
    assert (verified["spec_source"], verified["retrieval_rank"]) == ("doctest", 1)
    assert (verified["retrieval_score"], verified["policy"]) == (0.8, "rerank")
    assert (verified["passed_tests"], verified["failed_tests"]) == ([STORED[0]], [])
    assert verified["judged_against"] == "its own doctests"  # never "query tests"
    assert unverifiable["judged_against"] == "nothing"
    assert verified["outcomes"] == ["pass"]
    assert (unverifiable["status"], unverifiable["spec_source"]) == ("unverifiable", "none")
    assert unverifiable["message"] == "no tests to run"
    assert [item for item, _ in plan.kept(_result(plan, Policy.FILTER), limit=5)] == ["doc-doctest"]
    assert [item for item, _ in plan.kept(_result(plan, Policy.RERANK), limit=1)] == ["doc-doctest"]


def test_verdict_metadata_is_plain_json_and_reads_back_as_the_same_verdict() -> None:
    plan = plan_gate(ITEMS, CANDIDATES, None)
    result = _result(plan, Policy.RERANK)
    for gated in result.judged:
        metadata = verdict_metadata(gated, spec_source=SpecSource.PROVIDER, policy=result.policy)
        assert type(metadata["spec_source"]) is str and type(metadata["policy"]) is str
        travelled: dict[str, Any] = json.loads(json.dumps({"code": "x", METADATA_KEY: metadata}))
        assert travelled[METADATA_KEY] == metadata
        assert verdict_from_metadata(travelled) == gated.verdict


def test_verdict_from_metadata_without_a_verdict_or_with_a_bad_one() -> None:
    assert verdict_from_metadata({"file": "a.py"}) is None
    with pytest.raises(ValidationError):
        verdict_from_metadata({METADATA_KEY: {"status": "probably fine"}})


@pytest.mark.parametrize(
    "tests",
    [
        ["assert [[1, 2], [3]] == [[1, 2], [3]]"],  # calls nothing: passes for any code
        ["xs = [3, 1]", "assert sorted(xs) == [1, 3]"],  # only builtins and its own names
        ["assert (lambda n: n + 1)(1) == 2"],
        ["assert leap(2000)"],  # with a setup that defines leap itself: see below
    ],
)
def test_tests_that_read_no_name_the_code_could_define_are_refused(tests: list[str]) -> None:
    setup = "def leap(year):\n    return True\n"
    with pytest.raises(SpecError, match="would pass for any code; call the function you need"):
        plan_gate(ITEMS, CANDIDATES, tests, setup=setup)
    with pytest.raises(SpecError, match="would pass for any code"):
        plan_gate(ITEMS, CANDIDATES, None, provider=lambda item: tests, setup=setup)


def test_tests_reading_a_name_the_code_may_define_are_kept() -> None:
    for tests in (["assert leap_table[2024] is True"], ["assert list(map(is_leap_year, [4]))"]):
        plan = plan_gate(["doc"], [Candidate(code=CODE, metadata={"entry_point": "x"})], tests)
        assert plan.specs[0] is not None and plan.specs[0].tests == tuple(tests)


def test_public_metadata_leaves_host_paths_out_unless_asked() -> None:
    metadata = {"root": "/home/u/src", "file": "pkg/mod.py", "module": "pkg.mod", "start_line": 3}
    assert public_metadata(metadata) == {"file": "pkg/mod.py", "module": "pkg.mod", "start_line": 3}
    assert public_metadata(metadata, include_paths=True) == metadata
    under_root = {"root": "/home/u/src", "file": "/home/u/src/pkg/mod.py"}
    assert public_metadata(under_root) == {"file": "pkg/mod.py"}
    assert public_metadata({"file": "/tmp/elsewhere/tool.py"}) == {"file": "tool.py"}
    assert public_metadata({"file": "/tmp/x.py", "root": "/home/u"}) == {"file": "x.py"}
