"""The honest arms' pure parts on hand-made inputs (no sandbox): consensus clusters, agree, the
noisy answerer, hidden-test inputs, the sign test and the headline's wrap."""

from __future__ import annotations

import pytest

from guardrail.gate import Candidate, GatedCandidate, GateResult, Policy, Probing
from guardrail.probes import Probe
from guardrail.questions import Answer, Question
from guardrail.sandbox.runner.observing import key_of
from guardrail.spec import Spec
from guardrail.verdict import Observation, Reason, Status, Verdict
from guardrail_eval.answerers import hidden_inputs, is_wrong, noisy_answerer, probe_key
from guardrail_eval.consensus import agree_result, consensus_clusters, consensus_result
from guardrail_eval.headline import WIDTH, wrap_segments
from guardrail_eval.stats import mcnemar_paired, sign_test


def _value(value: object) -> Observation:
    return Observation(kind="value", text=repr(value), key=key_of(value))


def _probe(*args: str) -> Probe:
    return Probe(entry_point="f", args=args, origin="test")


def test_consensus_clusters_by_every_probe_largest_first_then_the_best_rank() -> None:
    raises = Observation(kind="raises", text="ValueError")
    rows = [
        [_value(1), _value(2)],  # 0: alone
        [_value(1), raises],  # 1: with 3
        [_value(5), _value(2)],  # 2: alone
        [_value(1), raises],  # 3
        [Observation.unjudged("timeout"), _value(2)],  # 4: with 5 (unjudged is an outcome too)
        [Observation.unjudged("crash"), _value(2)],  # 5
    ]
    assert consensus_clusters(rows) == [[1, 3], [4, 5], [0], [2]]
    # equal sizes: the cluster holding the better-ranked candidate first
    assert consensus_clusters([[_value(1)], [_value(2)], [_value(2)], [_value(1)]]) == [
        [0, 3],
        [1, 2],
    ]
    assert consensus_clusters([]) == []


def _gated(rank: int) -> GatedCandidate:
    verdict = Verdict(status=Status.VERIFIED, reason=Reason.PASSED)
    return GatedCandidate(
        candidate=Candidate(code=f"def f(x):\n    return {rank}\n", id=f"c{rank}"),
        verdict=verdict,
        retrieval_rank=rank,
    )


def test_consensus_hands_over_the_largest_clusters_best_member_first() -> None:
    judged = tuple(_gated(rank) for rank in range(4))
    result = GateResult(policy=Policy.RERANK, judged=judged, kept=judged)
    probing = Probing(
        spec=Spec.from_tests(["assert f(1) == 1"]),
        candidates=judged,
        probes=(_probe("0"),),
        observations=((_value(0),), (_value(9),), (_value(1),), (_value(9),)),
    )
    picked = consensus_result(result, probing)
    assert [item.retrieval_rank for item in picked.kept] == [1, 0, 2, 3]
    assert consensus_result(result, None) is result  # nothing probed: the gate's order
    agreeing = probing.model_copy(update={"observations": ((_value(0),),) * 4})
    assert [i.retrieval_rank for i in consensus_result(result, agreeing).kept] == [0, 1, 2, 3]


def test_agree_hands_over_nothing_when_the_gate_has_a_question() -> None:
    judged = tuple(_gated(rank) for rank in range(3))
    result = GateResult(policy=Policy.RERANK, judged=judged, kept=judged)
    agreed = agree_result(result)
    assert agreed.policy is Policy.AGREE and agreed.kept == judged  # no question: all verified
    asked = agree_result(result.model_copy(update={"question": _question(1, 2)}))
    assert asked.kept == () and asked.judged == judged and asked.abstained


def _question(*values: object) -> Question:
    answers = tuple(
        Answer(observation=_value(v), candidate_ids=(f"c{i}",), retrieval_ranks=(i,), test=None)
        for i, v in enumerate(values)
    )
    return Question(probe=_probe("3"), answers=answers)


def test_the_noisy_answerer_is_wrong_a_fixed_seeded_share_of_the_time() -> None:
    question, truth = _question(1, 2, 3), _value(1)
    wrong = 0
    for n in range(2000):
        answer = noisy_answerer(0.2, 0, f"q{n}:0")(0, question, truth)
        if answer != truth:
            wrong += 1
            assert answer.key in {_value(2).key, _value(3).key}  # another candidate's answer
        assert answer == noisy_answerer(0.2, 0, f"q{n}:0")(0, question, truth)  # seeded
    assert 330 < wrong < 470  # 20% of 2000 = 400
    assert is_wrong(0.2, 0, "q1:0", 0) == is_wrong(0.2, 0, "q1:0", 0)
    assert any(is_wrong(0.2, s, "q1:0", 0) != is_wrong(0.2, 0, "q1:0", 0) for s in range(1, 30))
    always = noisy_answerer(1.0, 0, "q")
    assert always(0, question, truth) != truth
    assert always(0, _question(1, 1), truth) == truth  # no other answer to give
    assert noisy_answerer(0.0, 0, "q")(0, question, truth) == truth
    with pytest.raises(ValueError, match="between 0 and 1"):
        noisy_answerer(1.5, 0, "q")


def test_hidden_inputs_are_the_full_suites_calls_the_visible_tests_do_not_make() -> None:
    full = Spec.from_tests(
        ["assert f(1) == 1", "assert f([2, 3]) == 5", "assert f(x=4) == 4", "assert f(1) > 0"]
    )
    visible = Spec.from_tests(["assert f(1) == 1"])
    hidden = hidden_inputs(full, visible)
    assert hidden == {(("[2, 3]",), ()), ((), (("x", "4"),))}
    assert probe_key(_probe("[2, 3]")) in hidden and probe_key(_probe("1")) not in hidden


def test_the_sign_test_is_mcnemar_on_binary_outcomes_and_takes_fractions() -> None:
    a = [1.0] * 66 + [0.0] * 47 + [1.0] * 10
    b = [0.0] * 66 + [1.0] * 47 + [1.0] * 10
    test = sign_test(a, b)
    assert (test.a_higher, test.b_higher, test.ties) == (66, 47, 10)
    assert test.p_value == pytest.approx(0.08995, abs=1e-5)
    assert test.p_value == mcnemar_paired(a, b).p_value
    fractions = sign_test([0.6, 0.2, 0.5], [0.25, 0.25, 0.5])
    assert (fractions.a_higher, fractions.b_higher, fractions.ties) == (1, 1, 1)
    assert fractions.p_value == 1.0


def test_the_headline_breaks_only_between_segments_within_80_columns() -> None:
    shares = "44.9% / 55.1% / 0.0% (silent buggy 4.9%)"
    segments = [(" ", "ungated 5.7% / 94.3% / 0.0%")]
    segments += [(" -> ", f"visible1+{arm} {shares}") for arm in ("consensus", "noisy-ask1")]
    segments += [("; ", "structural 97.1% / 2.9% / 0.0% (runs no code)")]
    text = wrap_segments("dense-minilm: acted on correct / buggy / nothing:", segments)
    lines = text.splitlines()
    assert len(lines) > 1 and all(len(line) <= WIDTH for line in lines)
    for line in lines:
        assert not line.rstrip().endswith("->")  # an arrow never ends a line
    assert lines[1].startswith("  -> visible1+consensus")
    assert lines[-1] == "  structural 97.1% / 2.9% / 0.0% (runs no code)"
    assert lines[-2].endswith(";")
    flat = " ".join(line.strip() for line in lines)
    assert flat == "dense-minilm: acted on correct / buggy / nothing:" + "".join(
        separator + part for separator, part in segments
    )
    long = "x" * 100
    assert wrap_segments("a:", [(" -> ", long)]).splitlines() == ["a:", f"  -> {long}"]
