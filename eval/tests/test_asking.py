"""The oracle loop over the real Docker sandbox: the gate asks, the pool's canonical answers."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrail.cache import VerdictCache
from guardrail.gate import Candidate
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec
from guardrail_eval.answerers import noisy_answerer, probe_key
from guardrail_eval.asking import RecordingGate, ask_rounds
from guardrail_eval.pool import Pool, load_pool

pytestmark = pytest.mark.docker

RELEASE = Path(__file__).parent / "fixtures" / "release"


@pytest.fixture(scope="module")
def asking_gate(
    docker_sandbox: DockerSandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RecordingGate]:
    cache = VerdictCache(tmp_path_factory.mktemp("ask-cache") / "verdicts.sqlite")
    yield RecordingGate(docker_sandbox, cache=cache, ask=False)  # ask_rounds asks regardless
    cache.close()


def _candidates(pool: Pool, query_index: int) -> tuple[list[Candidate], str]:
    query = pool.queries[query_index]
    canonical = pool.canonical(query)
    entries = [*pool.distractors(query), canonical]  # the canonical retrieved last
    return [Candidate(code=e.code, id=e.corpus_id) for e in entries], canonical.corpus_id


def test_answered_questions_leave_the_canonical_alone_on_the_fixture_pool(
    asking_gate: RecordingGate,
) -> None:
    pool = load_pool(RELEASE)
    asked = 0
    for index, query in enumerate(pool.queries):
        candidates, canonical_id = _candidates(pool, index)
        for test in query.test_suite:  # each test alone: the thinnest spec
            spec = Spec.build([test], pool.entry_point(query), query.test_setup)
            rounds = ask_rounds(asking_gate, candidates, spec, pool.canonical(query).code, 3)
            first, last = rounds[0], rounds[-1]
            kept = [item.candidate.id for item in last.result.kept]
            assert kept == [canonical_id], (query.query_id, test, kept)
            assert last.question is None and last.answer is None
            assert 1 <= len(rounds) <= 4
            for done in rounds[:-1]:  # every earlier round asked and was answered
                assert done.question is not None and done.answer is not None
                assert done.answer.judged
                ids = {cid for answer in done.question.answers for cid in answer.candidate_ids}
                assert canonical_id in ids
            if len(first.result.kept) > 1:
                asked += 1
    assert asked >= 10  # the thin specs left several verified: the questions did the work


def test_rounds_stop_at_the_cap_with_the_last_question_unanswered(
    asking_gate: RecordingGate,
) -> None:
    pool = load_pool(RELEASE)
    query = pool.queries[1]  # clamp: four distractors, three pass its first test
    candidates, _ = _candidates(pool, 1)
    spec = Spec.build(query.test_suite[:1], pool.entry_point(query), query.test_setup)
    (only,) = ask_rounds(asking_gate, candidates, spec, pool.canonical(query).code, 0)
    assert only.question is not None and only.answer is None
    assert len(only.result.kept) > 1


def test_an_oracle_that_cannot_be_judged_stops_the_asking(asking_gate: RecordingGate) -> None:
    pool = load_pool(RELEASE)
    query = pool.queries[1]
    candidates, _ = _candidates(pool, 1)
    spec = Spec.build(query.test_suite[:1], pool.entry_point(query), query.test_setup)
    oracle = "def clamp(value, low, high):\n    return object()\n"  # not plain data: unjudged
    rounds = ask_rounds(asking_gate, candidates, spec, oracle, 3)
    assert len(rounds) == 1
    assert rounds[0].question is not None and rounds[0].answer is not None
    assert rounds[0].answer.kind == "unjudged"
    with pytest.raises(ValueError, match="at least 0"):
        ask_rounds(asking_gate, candidates, spec, oracle, -1)


def test_a_hidden_tests_input_is_never_asked_and_a_noisy_answer_is_another_candidates(
    asking_gate: RecordingGate,
) -> None:
    pool = load_pool(RELEASE)
    query = pool.queries[1]
    candidates, _ = _candidates(pool, 1)
    spec = Spec.build(query.test_suite[:1], pool.entry_point(query), query.test_setup)
    canonical = pool.canonical(query).code
    (free,) = ask_rounds(asking_gate, candidates, spec, canonical, 0)
    assert free.question is not None and free.probing is not None
    assert free.gate_question == free.question
    banned = frozenset({probe_key(free.question.probe)})
    (kept,) = ask_rounds(asking_gate, candidates, spec, canonical, 0, excluded=banned)
    assert kept.gate_question == free.question  # the gate's own question is kept beside
    assert kept.question is not None and probe_key(kept.question.probe) not in banned
    assert kept.probing is not None  # the same runs, read again (the verdict cache)
    assert (kept.probing.probes, kept.probing.observations) == (
        free.probing.probes,
        free.probing.observations,
    )
    # an answerer that always answers wrongly gives another answer the candidates gave
    wrong = ask_rounds(
        asking_gate, candidates, spec, canonical, 1, answerer=noisy_answerer(1.0, 0, "q")
    )
    first = wrong[0]
    assert first.answer is not None and first.truth is not None and first.wrong
    assert first.question is not None
    given = {answer.observation.key for answer in first.question.answers}
    assert first.answer.key in given and first.answer.key != first.truth.key
