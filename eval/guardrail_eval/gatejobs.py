"""One gate call of the eval (`GateJob`) and what it hands the agent (`gated_outcome`)."""

from __future__ import annotations

from dataclasses import dataclass

from guardrail.gate import GatedCandidate, GateResult
from guardrail_eval.arms import GateCost, JudgedItem, QueryOutcome
from guardrail_eval.ask_arms import AskRun
from guardrail_eval.pool import Query
from guardrail_eval.truth import Judge

__all__ = ["GateJob", "gated_outcome", "job_of"]


@dataclass(frozen=True, slots=True)
class GateJob:
    """One gate call: the query, what the gate decided, its cost, the draw and visible tests."""

    query: Query
    result: GateResult
    cost: GateCost
    draw: int
    visible: tuple[int, ...] | None
    questions: int | None = None
    silent: bool | None = None
    hidden_probe: bool | None = None
    wrong: int | None = None


def job_of(
    query: Query, run: AskRun, draw: int, indices: tuple[int, ...], *, noisy: bool
) -> GateJob:
    """The gate job of one arm's run (``noisy``: it counts its wrong answers)."""
    return GateJob(
        query,
        run.result,
        run.cost,
        draw,
        indices,
        run.questions,
        run.silent,
        run.hidden_probe,
        run.wrong if noisy else None,
    )


def gated_outcome(job: GateJob, judge: Judge) -> QueryOutcome:
    """What the gate handed over (policy order) and what it dropped (retrieval order)."""
    query, result = job.query, job.result

    def judged(item: GatedCandidate) -> JudgedItem:
        corpus_id = item.candidate.id
        return JudgedItem(
            corpus_id,
            float(item.candidate.score or 0.0),
            item.retrieval_rank + 1,
            judge.truth(query, corpus_id),
            item.verdict,
        )

    kept_ranks = {item.retrieval_rank for item in result.kept}
    return QueryOutcome(
        query,
        tuple(judged(item) for item in result.kept),
        dropped=tuple(judged(i) for i in result.judged if i.retrieval_rank not in kept_ranks),
        cost=job.cost,
        draw=job.draw,
        visible=job.visible,
        questions=job.questions,
        silent=job.silent,
        hidden_probe=job.hidden_probe,
        wrong_answers=job.wrong,
    )
