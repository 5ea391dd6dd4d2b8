"""The eval end to end on the release fixture: real Chroma + MiniLM, BM25, replay, Docker gate."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrail.cache import VerdictCache
from guardrail.gate import Gate, Policy
from guardrail.index import SentenceTransformerEmbedding
from guardrail.sandbox.docker import DockerSandbox
from guardrail.verdict import Reason, Status
from guardrail_eval.arms import ArmKind, QueryOutcome
from guardrail_eval.errors import EvalSettingError
from guardrail_eval.metrics import agent_view, compute_metrics
from guardrail_eval.pool import Pool, load_pool
from guardrail_eval.results import load_results
from guardrail_eval.runner import (
    EvalRun,
    EvalSettings,
    SystemRun,
    parse_visible_tests,
    run_eval,
)
from guardrail_eval.systems import BM25System, DenseSystem, ReplaySystem, RetrievalSystem

pytestmark = pytest.mark.docker

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release"
RESULTS = RELEASE / "results" / "fixture__toy-minilm.json"


@pytest.fixture(scope="module")
def pool() -> Pool:
    return load_pool(RELEASE)


@pytest.fixture(scope="module")
def shared_gate(
    docker_sandbox: DockerSandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Gate]:
    cache = VerdictCache(tmp_path_factory.mktemp("eval-cache") / "verdicts.sqlite")
    yield Gate(docker_sandbox, cache=cache)
    cache.close()


@pytest.fixture(scope="module")
def run(pool: Pool, shared_gate: Gate, minilm: SentenceTransformerEmbedding) -> EvalRun:
    """Dense, BM25 and the fixture's replay; every arm, one random visible test in two draws."""
    systems: list[RetrievalSystem] = [
        DenseSystem(minilm),
        BM25System(),
        ReplaySystem.load(RESULTS, pool),
    ]
    stages: list[str] = []
    result = run_eval(
        pool,
        systems,
        shared_gate,
        EvalSettings(visible_tests=(1,), draws=2),
        on_progress=lambda stage, done, total: stages.append(stage),
    )
    assert any("gating (visible1)" in stage for stage in stages)
    assert any("gating (upper-bound)" in stage for stage in stages)
    return result


def _system(run: EvalRun, name: str) -> SystemRun:
    return next(system for system in run.systems if system.system == name)


def test_every_system_has_its_four_arms(run: EvalRun) -> None:
    assert [s.system for s in run.systems] == ["dense-minilm", "bm25", "fixture__toy-minilm"]
    names = [arm.name for arm in run.arms]
    assert names[:4] == [
        "dense-minilm", "dense-minilm+structural", "dense-minilm+upper-bound",
        "dense-minilm+visible1",
    ]  # fmt: skip
    assert all(len(arm.outcomes) == 3 * arm.draws for arm in run.arms)
    assert [arm.draws for arm in run.arms[:4]] == [1, 1, 1, 2]
    assert all(len(outcome.items) == 10 for arm in run.arms if not arm.gated
               for outcome in arm.outcomes)  # fmt: skip


def test_the_structural_arm_runs_nothing_and_reorders_the_same_snippets(run: EvalRun) -> None:
    for system in run.systems:
        ungated, structural = system.arms[0], system.arms[1]
        for plain, picked in zip(ungated.outcomes, structural.outcomes, strict=True):
            assert {i.corpus_id for i in plain.items} == {i.corpus_id for i in picked.items}
            assert all(item.gate_verdict is None for item in picked.items)
            assert picked.cost is None
            moved = picked.items[0]
            rest = [item for item in plain.items if item.corpus_id != moved.corpus_id]
            assert list(picked.items[1:]) == rest  # the rest in retrieval order


def test_gated_exec_at_1_is_never_below_ungated(run: EvalRun) -> None:
    for system in run.systems:
        ungated = compute_metrics(system.ungated.ranked_queries(run.pool))
        gated = compute_metrics(system.arms[2].ranked_queries(run.pool))
        assert gated["exec@1"] >= ungated["exec@1"]
        assert gated["exec@1"] == 1.0  # every top 10 of this fixture holds its canonical
    assert compute_metrics(_system(run, "fixture__toy-minilm").ungated.ranked_queries(run.pool))[
        "exec@1"
    ] == pytest.approx(1 / 3)


def test_the_gate_never_hands_over_a_candidate_that_failed(run: EvalRun) -> None:
    for arm in run.arms:
        for outcome in arm.outcomes:
            for item in outcome.items:
                if arm.gated:
                    assert item.gate_verdict is not None
                    assert item.gate_verdict.status in {Status.VERIFIED, Status.UNVERIFIABLE}
            if arm.gated:
                assert all(d.gate_verdict is not None for d in outcome.dropped)
                # Verified and dropped: withheld by agree, which then hands over nothing.
                withheld = [
                    d for d in outcome.dropped if d.gate_verdict and d.gate_verdict.verified
                ]
                assert not withheld or (arm.kind is ArmKind.AGREE and not outcome.items)
                assert len(outcome.items) + len(outcome.dropped) == 10
    all_tests = [arm for arm in run.arms if arm.kind is ArmKind.UPPER_BOUND]
    assert all(item.passes_all_tests for arm in all_tests for o in arm.outcomes for item in o.items)


def test_hidden_tests_decide_what_counts_as_correct(run: EvalRun) -> None:
    arm = _system(run, "fixture__toy-minilm").arms[3]
    assert arm.name == "fixture__toy-minilm+visible1"
    handed = [item for outcome in arm.outcomes for item in outcome.items]
    assert all(item.gate_verdict is not None and len(item.gate_verdict.tests) == 1
               for item in handed)  # fmt: skip
    fooled = [item for item in handed if not item.passes_all_tests]
    assert fooled, "a distractor passing the first test must be handed over and count as buggy"
    assert all(len(item.truth.tests) == 5 and item.gate_verdict is not None
               and item.gate_verdict.verified for item in fooled)  # fmt: skip
    view = agent_view(arm.ranked_queries(run.pool))
    assert view.n_buggy >= 1


def test_ground_truth_matches_the_fixture_s_recorded_execution(run: EvalRun) -> None:
    stored = load_results(RESULTS)
    replay = _system(run, "fixture__toy-minilm").ungated
    compared = 0
    for query, outcome in zip(stored.per_query, replay.outcomes, strict=True):
        own = {*outcome.query.correct_corpus_ids, *outcome.query.paired_distractor_corpus_ids}
        for item, judged in zip(query.ranked(), outcome.items, strict=True):
            assert judged.corpus_id == item.corpus_id
            assert judged.passes_all_tests is item.passes_all_tests
            # another task's snippet fails either way; its error word depends on the runner
            if item.test_results and item.corpus_id in own:
                assert judged.truth.outcomes == item.test_results
                compared += 1
    assert compared >= 12


def test_canonical_below_a_distractor_is_known_for_dense_and_bm25_only(run: EvalRun) -> None:
    for name, known in [("dense-minilm", True), ("bm25", True), ("fixture__toy-minilm", False)]:
        ranked = _system(run, name).ungated.ranked_queries(run.pool)
        assert all((query.snippet_scores is not None) is known for query in ranked)


def _refused_on_the_host(outcome: QueryOutcome) -> int:
    """Candidates of a query the gate refused before running them (no test ran)."""
    judged = [*outcome.items, *outcome.dropped]
    return sum(
        item.gate_verdict is not None
        and item.gate_verdict.reason is Reason.MISSING_ENTRY_POINT
        and not item.gate_verdict.tests
        for item in judged
    )


def test_gate_cost_is_recorded_per_query(run: EvalRun) -> None:
    first = _system(run, "dense-minilm").arms[2]
    costs = [outcome.cost for outcome in first.outcomes]
    assert all(cost is not None and cost.latency_s > 0 for cost in costs)
    assert sum(cost.sandbox_runs for cost in costs if cost is not None) > 0
    for arm in run.arms:
        for outcome in arm.outcomes if arm.gated else []:
            assert outcome.cost is not None
            # Each of the 10 is run, cached, or refused on the host (an unsafe alias: nothing ran)
            refused = _refused_on_the_host(outcome)
            judged = outcome.cost.cache_hits + outcome.cost.sandbox_runs + refused
            if outcome.silent is None:  # the gate did not ask
                assert judged == 10
            else:  # asking runs the verified candidates on its probes too
                assert judged >= 10
    later = _system(run, "bm25").arms[2]  # mostly the dense run's snippets and specs: cached
    assert sum(o.cost.cache_hits for o in later.outcomes if o.cost is not None) > 0
    assert run.sandbox_runs < run.verifications
    assert set(run.timings) >= {"dense-minilm.index_s", "bm25.gate_s", "bm25.ground_truth_s"}


def test_without_a_cache_each_pair_still_runs_once(
    pool: Pool, docker_sandbox: DockerSandbox
) -> None:
    settings = EvalSettings(visible_tests=())
    result = run_eval(pool, [BM25System()], Gate(docker_sandbox, cache=False), settings)
    # the gate judged each query's top 10 against all tests; ground truth reused every verdict;
    # a candidate whose alias would be unsafe is refused on the host and never runs
    gated = result.systems[0].arms[2]
    refused = sum(_refused_on_the_host(o) for o in gated.outcomes)
    assert result.sandbox_runs == 3 * 10 - refused
    assert result.cache == "off"
    assert all(o.cost is not None and o.cost.cache_hits == 0 for o in gated.outcomes)


def test_an_abstaining_gate_hands_over_nothing(pool: Pool, shared_gate: Gate) -> None:
    replay = ReplaySystem.load(RESULTS, pool)
    settings = EvalSettings(fetch_k=1, policy=Policy.ABSTAIN, visible_tests=())
    result = run_eval(pool, [replay], shared_gate, settings)
    gated = result.systems[0].arms[2]
    # the stored rank 1 is a distractor for q_0001 and q_0004 and the canonical for q_0002
    assert [len(outcome.items) for outcome in gated.outcomes] == [0, 1, 0]
    view = agent_view(gated.ranked_queries(pool))
    assert (view.n_nothing, view.n_correct, view.n_buggy) == (2, 1, 0)
    assert len(result.systems[0].ungated.outcomes[0].items) == 10  # ungated still top 10


def test_visible_tests_setting_is_parsed_and_checked() -> None:
    assert parse_visible_tests(" 3 ") == 3
    for bad in ["0", "-1", "two", "", "all"]:
        with pytest.raises(EvalSettingError, match="--visible-tests must be a whole number"):
            parse_visible_tests(bad)
    with pytest.raises(EvalSettingError, match="--draws must be at least 1"):
        EvalSettings(draws=0)
    with pytest.raises(EvalSettingError, match="--fetch-k must be at least 1"):
        EvalSettings(fetch_k=0)
    with pytest.raises(EvalSettingError, match="repeated"):
        EvalSettings(visible_tests=(1, 1))
    assert EvalSettings(fetch_k=20).depth == 20
    assert EvalSettings(fetch_k=3).depth == 10


def test_systems_must_have_distinct_names(pool: Pool, shared_gate: Gate) -> None:
    with pytest.raises(EvalSettingError, match="distinct names"):
        run_eval(pool, [BM25System(), BM25System()], shared_gate)
    with pytest.raises(EvalSettingError, match="distinct names"):
        run_eval(pool, [], shared_gate)
