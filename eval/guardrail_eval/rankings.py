"""``results/<arm>.json``: each arm's rankings in the release's results shape, with verdicts.

Every item carries its ``retrieval_rank`` and ``verdict`` (the gate's, against the visible tests,
in gated files; the full suite's otherwise) and its ``test_results`` on the full suite. Gated
files carry per query a ``gate`` object (abstained, latency, sandbox runs, cache hits, dropped
items); visible and ask arms one entry per (draw, query), draw-major, with its ``draw``, the
indices of its ``visible_tests`` and, when the gate asked, ``questions``, ``silent`` and
``hidden_probe`` (its own question was a hidden test's input), and ``wrong_answers`` in
noisy-ask files. The
file's ``metrics`` (`round_metrics` of the mean over all entries) are the mean over draws.
"""

from __future__ import annotations

from typing import Any

from guardrail.verdict import Verdict
from guardrail_eval.arms import Arm, ArmKind, JudgedItem, QueryOutcome
from guardrail_eval.metrics import compute_metrics, round_metrics
from guardrail_eval.pool import Pool, Query
from guardrail_eval.results import QueryResult, ResultsFile, TopResult
from guardrail_eval.runner import EvalSettings

__all__ = ["results_file"]


def results_file(arm: Arm, pool: Pool, settings: EvalSettings) -> ResultsFile:
    """One arm in the release's ``results/<model>.json`` shape, extended with verdicts."""
    ks = list(settings.ks)
    extra: dict[str, Any] = {"system": arm.system, "pool": pool.name, "arm": arm.kind.value}
    extra["draws"] = arm.draws
    extra["n_distinct_queries"] = len(arm.outcomes) // arm.draws
    if arm.gated:
        extra["gate"] = {
            "policy": settings.policy.value,
            "fetch_k": settings.fetch_k,
            "visible_tests": "all" if arm.visible is None else arm.visible,
            "draw_seed": settings.seed,
        }
        if arm.questions is not None:
            extra["gate"]["max_questions"] = arm.questions
        if arm.kind is ArmKind.NOISY_ASK:
            extra["gate"]["noisy_share"] = settings.noisy_share
        extra["role"] = arm.kind.role
    return ResultsFile(
        model=arm.name,
        n_queries=len(arm.outcomes),
        n_corpus=len(pool.corpus),
        ks=ks,
        metrics=round_metrics(compute_metrics(arm.ranked_queries(pool), ks)),
        per_query=[_query_result(pool, outcome, gated=arm.gated) for outcome in arm.outcomes],
        **extra,
    )


def _query_result(pool: Pool, outcome: QueryOutcome, *, gated: bool) -> QueryResult:
    query = outcome.query
    extra: dict[str, Any] = {}
    if outcome.visible is not None:
        extra["draw"] = outcome.draw
        extra["visible_tests"] = list(outcome.visible)
    if outcome.questions is not None:
        extra["questions"] = outcome.questions
    if outcome.silent is not None:
        extra["silent"] = outcome.silent
    if outcome.hidden_probe is not None:
        extra["hidden_probe"] = outcome.hidden_probe
    if outcome.wrong_answers is not None:
        extra["wrong_answers"] = outcome.wrong_answers
    if gated and outcome.cost is not None:
        extra["gate"] = {
            "abstained": not outcome.items,
            "latency_s": round(outcome.cost.latency_s, 6),
            "sandbox_runs": outcome.cost.sandbox_runs,
            "cache_hits": outcome.cost.cache_hits,
            "dropped": [_item_row(pool, item, query) for item in outcome.dropped],
        }
    return QueryResult(
        query_id=query.query_id,
        query=query.query,
        correct_corpus_ids=list(query.correct_corpus_ids),
        top_results=[
            TopResult(rank=rank, **_item_row(pool, item, query))
            for rank, item in enumerate(outcome.items, start=1)
        ],
        **extra,
    )


def _test_results(truth: Verdict, query: Query) -> list[str]:
    """The per-test words of the ground-truth run; a candidate refused before anything ran (it
    defines nothing the tests call, say) errs on every test, as calling the name would in-process,
    so the row never reads as an empty, vacuously passing suite."""
    if truth.tests:
        return truth.outcomes
    return [f"ERROR:{truth.reason.value}"] * len(query.test_suite)


def _item_row(pool: Pool, item: JudgedItem, query: Query) -> dict[str, Any]:
    """A ranked item as a results-file row (without its ``rank``), with its verdict."""
    entry = pool.corpus[item.corpus_id]
    verdict = item.gate_verdict or item.truth
    return {
        "corpus_id": item.corpus_id,
        "label": entry.label,
        "bug_type": entry.bug_type or "",
        "similarity": round(item.score, 6),
        "passes_all_tests": item.passes_all_tests,
        "test_results": _test_results(item.truth, query),
        "retrieval_rank": item.retrieval_rank,
        "verdict": {
            "status": verdict.status.value,
            "reason": verdict.reason.value,
            "message": verdict.message,
            "alias": verdict.alias,
            "duration_s": round(verdict.duration_s, 6),
            "cached": verdict.cached,
            "failed_tests": verdict.failed_tests,
        },
    }
