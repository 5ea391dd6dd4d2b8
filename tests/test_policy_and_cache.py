"""Policy ordering and the verdict cache, on constructed verdicts (no sandbox involved)."""

from __future__ import annotations

from pathlib import Path

import pytest

import guardrail
from guardrail.cache import VerdictCache
from guardrail.gate import Candidate, GatedCandidate, GateResult, Policy, apply_policy
from guardrail.integration import plan_gate
from guardrail.probes import Probe
from guardrail.questions import Answer, Question
from guardrail.spec import Spec
from guardrail.verdict import Observation, Reason, Status, TestOutcome, Verdict

VERDICTS = {
    Status.VERIFIED: Verdict(status=Status.VERIFIED, reason=Reason.PASSED),
    Status.FAILED: Verdict(status=Status.FAILED, reason=Reason.TESTS_FAILED),
    Status.ERROR: Verdict(status=Status.ERROR, reason=Reason.LOAD_ERROR),
    Status.TIMEOUT: Verdict(status=Status.TIMEOUT, reason=Reason.TIMEOUT),
    Status.UNVERIFIABLE: Verdict(status=Status.UNVERIFIABLE, reason=Reason.NO_TESTS),
}


def _judged(*statuses: Status) -> list[GatedCandidate]:
    return [
        GatedCandidate(
            candidate=Candidate(code="", id=f"{rank}:{status}"),
            verdict=VERDICTS[status],
            retrieval_rank=rank,
        )
        for rank, status in enumerate(statuses)
    ]


def _ids(items: list[GatedCandidate]) -> list[str]:
    return [item.candidate.id for item in items]


def test_rerank_puts_verified_first_then_unverifiable_and_drops_the_rest() -> None:
    judged = _judged(
        Status.FAILED,
        Status.UNVERIFIABLE,
        Status.VERIFIED,
        Status.TIMEOUT,
        Status.VERIFIED,
        Status.ERROR,
    )
    assert _ids(apply_policy(judged, Policy.RERANK)) == [
        "2:verified",
        "4:verified",
        "1:unverifiable",
    ]
    assert _ids(apply_policy(judged, Policy.FILTER)) == ["2:verified", "4:verified"]
    assert _ids(apply_policy(judged, Policy.ABSTAIN)) == [
        "2:verified",
        "4:verified",
        "1:unverifiable",
    ]


def test_unjudgeable_ranks_after_untested_and_only_under_rerank() -> None:
    unjudgeable = Verdict(status=Status.UNVERIFIABLE, reason=Reason.UNSERIALISABLE)
    judged = [
        GatedCandidate(
            candidate=Candidate(code="", id="0:unjudgeable"), verdict=unjudgeable, retrieval_rank=0
        ),
        *_judged(Status.FAILED, Status.UNVERIFIABLE, Status.VERIFIED)[1:],
    ]
    assert _ids(apply_policy(judged, Policy.RERANK)) == [
        "2:verified",
        "1:unverifiable",
        "0:unjudgeable",
    ]
    assert _ids(apply_policy(judged, Policy.ABSTAIN)) == ["2:verified", "1:unverifiable"]
    assert _ids(apply_policy(judged, Policy.FILTER)) == ["2:verified"]


def test_abstain_hands_over_nothing_when_nothing_verified() -> None:
    judged = _judged(Status.FAILED, Status.UNVERIFIABLE)
    assert apply_policy(judged, Policy.ABSTAIN) == []
    assert _ids(apply_policy(judged, Policy.RERANK)) == ["1:unverifiable"]


def _question(judged: list[GatedCandidate]) -> Question:
    """A question whose two answers split the verified candidates of ``judged``."""
    verified = [item for item in judged if item.verdict.verified]
    answers = tuple(
        Answer(
            observation=Observation(kind="value", text=text, key=text),
            candidate_ids=(item.candidate.id,),
            retrieval_ranks=(item.retrieval_rank,),
            test=None,
        )
        for item, text in zip(verified, ("1", "2"), strict=False)
    )
    return Question(probe=Probe(entry_point="f", args=("3",), origin="test"), answers=answers)


def test_agree_withholds_everything_when_the_verified_disagree() -> None:
    judged = _judged(Status.FAILED, Status.VERIFIED, Status.UNVERIFIABLE, Status.VERIFIED)
    assert apply_policy(judged, Policy.AGREE, _question(judged)) == []
    # Without a question (they agree on every input tried) it is abstain.
    assert _ids(apply_policy(judged, Policy.AGREE)) == [
        "1:verified",
        "3:verified",
        "2:unverifiable",
    ]
    assert apply_policy(_judged(Status.FAILED, Status.UNVERIFIABLE), Policy.AGREE) == []
    # The other policies never look at the question.
    for policy in (Policy.RERANK, Policy.FILTER, Policy.ABSTAIN):
        assert apply_policy(judged, policy, _question(judged)) == apply_policy(judged, policy)


def test_a_plan_reports_withheld_verified_items_as_not_handed_over() -> None:
    judged = _judged(Status.FAILED, Status.VERIFIED, Status.UNVERIFIABLE, Status.VERIFIED)
    question = _question(judged)
    plan = plan_gate(
        [item.candidate.id for item in judged], [item.candidate for item in judged], None
    )

    def result(policy: Policy, asked: Question | None) -> GateResult:
        kept = tuple(apply_policy(judged, policy, asked))
        return GateResult(policy=policy, judged=tuple(judged), kept=kept, question=asked)

    withheld = plan.dropped(result(Policy.AGREE, question))
    assert [item for item, _ in withheld] == ["0:failed", "1:verified", "3:verified"]
    assert [meta["status"] for _, meta in withheld] == ["failed", "verified", "verified"]
    # Abstain hands the verified over, so only the failed one is not handed over.
    assert [item for item, _ in plan.dropped(result(Policy.ABSTAIN, question))] == ["0:failed"]
    assert [item for item, _ in plan.dropped(result(Policy.AGREE, None))] == ["0:failed"]


def test_verdict_json_round_trip() -> None:
    verdict = Verdict(
        status=Status.FAILED,
        reason=Reason.TESTS_FAILED,
        message="1 of 2 tests failed",
        tests=(
            TestOutcome(test="assert f(1) == 1", outcome="pass"),
            TestOutcome(test="assert f(2) == 3", outcome="FAIL", detail=""),
        ),
        alias="g",
        duration_s=0.01,
        stdout="out",
        stderr="err",
    )
    assert Verdict.model_validate_json(verdict.model_dump_json()) == verdict
    assert verdict.outcomes == ["pass", "FAIL"]
    assert verdict.failed_tests == ["assert f(2) == 3"]


def test_cache_keys_on_code_spec_and_sandbox(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "v.sqlite")
    spec = Spec.build(["assert f() == 1"], "f")
    verdict = VERDICTS[Status.VERIFIED]
    assert cache.put("code", spec, "image-a", verdict)
    assert cache.get("code", spec, "image-a") == verdict.model_copy(update={"cached": True})
    assert cache.get("code", spec, "image-b") is None
    assert cache.get("other code", spec, "image-a") is None
    assert cache.get("code", Spec.build(["assert f() == 2"], "f"), "image-a") is None
    assert not cache.put("code", spec, "image-a", VERDICTS[Status.TIMEOUT])
    cache.close()
    assert len(VerdictCache(tmp_path / "v.sqlite")) == 1  # persisted


def test_public_api_is_pinned() -> None:
    assert sorted(guardrail.__all__) == [
        "Answer",
        "CacheWarning",
        "Candidate",
        "CandidateFileError",
        "CodeContext",
        "DockerSandbox",
        "EngineUnavailableError",
        "Gate",
        "GateResult",
        "GatedCandidate",
        "GuardrailError",
        "ImageNotFoundError",
        "ImageUnusableError",
        "InputError",
        "Job",
        "MissingContextError",
        "Observation",
        "Policy",
        "Probe",
        "Question",
        "Reason",
        "RuntimeNotFoundError",
        "Sandbox",
        "SandboxError",
        "SandboxLimits",
        "Spec",
        "SpecError",
        "Status",
        "TestOutcome",
        "UnavailableError",
        "Verdict",
        "VerdictCache",
        "apply_policy",
        "context_metadata",
        "generate_probes",
    ]


def test_every_sandbox_limit_is_part_of_the_cache_identity() -> None:
    from dataclasses import fields

    from guardrail.sandbox.docker import SandboxLimits

    base = SandboxLimits()
    for field in fields(SandboxLimits):
        changed = SandboxLimits(**{field.name: getattr(base, field.name) * 2})
        assert changed.fingerprint() != base.fingerprint(), field.name


@pytest.mark.parametrize(
    ("environment", "arguments", "message"),
    [
        ({}, {"timeout_s": float("nan")}, "timeout_s must be a positive finite number"),
        ({}, {"timeout_s": 0}, "timeout_s must be a positive finite number"),
        ({}, {"timeout_s": 3601}, "timeout_s must be at most 3600"),
        ({}, {"pool_size": 0}, "pool size must be between 1 and 64"),
        ({}, {"pool_size": 65}, "pool size must be between 1 and 64"),
        ({"GUARDRAIL_POOL_SIZE": "abc"}, {}, r"\$GUARDRAIL_POOL_SIZE must be a whole number"),
        ({"GUARDRAIL_POOL_SIZE": "2.5"}, {}, r"\$GUARDRAIL_POOL_SIZE must be a whole number"),
        ({"GUARDRAIL_POOL_SIZE": "100000"}, {}, r"got 100000 \(pool_size or \$GUARDRAIL_POOL"),
        ({"GUARDRAIL_TIMEOUT": "inf"}, {}, r"positive finite number.*\$GUARDRAIL_TIMEOUT"),
        ({"GUARDRAIL_TIMEOUT": "1e10"}, {}, r"at most 3600 s.*\$GUARDRAIL_TIMEOUT"),
        ({"GUARDRAIL_TIMEOUT": "-1"}, {}, r"positive finite number.*\$GUARDRAIL_TIMEOUT"),
    ],
)
def test_bad_sandbox_settings_are_input_errors(
    monkeypatch: pytest.MonkeyPatch,
    environment: dict[str, str],
    arguments: dict[str, float],
    message: str,
) -> None:
    from guardrail.errors import InputError
    from guardrail.sandbox.docker import DockerSandbox

    for name, value in environment.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(InputError, match=message):
        DockerSandbox("any-image", **arguments)  # type: ignore[arg-type]


def test_sandbox_settings_come_from_arguments_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from guardrail.sandbox.docker import DockerSandbox

    monkeypatch.setenv("GUARDRAIL_TIMEOUT", "1.5")
    monkeypatch.setenv("GUARDRAIL_POOL_SIZE", "3")
    monkeypatch.setenv("GUARDRAIL_IMAGE", "from-env")
    from_env = DockerSandbox()
    assert (from_env.limits.timeout_s, from_env.pool_size, from_env.image) == (1.5, 3, "from-env")
    given = DockerSandbox("given", timeout_s=2.0, pool_size=1)
    assert (given.limits.timeout_s, given.pool_size, given.image) == (2.0, 1, "given")
    from_env.close()
    given.close()
