"""The arms where nobody answers: the candidates vote (consensus: MBR-exec, Shi et al. 2022;
CodeT, Chen et al. 2022), or their disagreement withholds them all (agree).

This is what a deployed agent really has when its tests are thin and no one is there to answer
a question. Among the candidates that pass the visible tests, the gate already ran every one on
its generated inputs to look for a question (`Gate.probe_verified`); here those same runs are
read a second way. Candidates that did the same on every input (the same value or the same
exception; an input a candidate could not be judged on counts as one more outcome) form a
cluster, and the agent is handed the best-ranked member of the largest cluster first (ties: the
cluster whose best member ranks higher), then everything else the gate kept, in its order.
Nothing is run again: the arm costs what the gate's round 0 cost.

MBR-exec picks the program with the least execution loss to the others, the loss being 0 for two
programs that agree on every input and 1 otherwise: the largest cluster. CodeT also weighs a
cluster by the generated tests it passes; here every member passes the same visible tests, so
the two agree. Agreement is not correctness: near-clones that share a bug outvote the one
correct candidate, and the arm acts silently on buggy code only when every verified candidate
agreed (the gate then raised no question).

The agree arm reads the same runs as the ``agree`` policy does (`guardrail.gate.Policy`): when
the verified candidates disagree on any input the gate tried (it has a question, even one on a
hidden test's input: a deployed gate does not know which tests are hidden), nothing is handed
over; otherwise what ``abstain`` keeps. It trades acting on correct code for not acting on buggy
code, and it acts on buggy code only silently.
"""

from __future__ import annotations

from collections.abc import Sequence

from guardrail.gate import GateResult, Policy, Probing, apply_policy
from guardrail.questions import Observation

__all__ = ["agree_result", "consensus_clusters", "consensus_result"]


def _signature(row: Sequence[Observation]) -> tuple[str, ...]:
    return tuple(seen.key if seen.judged else "unjudged" for seen in row)


def consensus_clusters(observations: Sequence[Sequence[Observation]]) -> list[list[int]]:
    """Candidates (indices into ``observations``, given in retrieval order) grouped by what they
    did on every probe: largest cluster first, ties by the earliest member."""
    groups: dict[tuple[str, ...], list[int]] = {}
    for index, row in enumerate(observations):
        groups.setdefault(_signature(row), []).append(index)
    return sorted(groups.values(), key=lambda members: (-len(members), members[0]))


def consensus_result(result: GateResult, probing: Probing | None) -> GateResult:
    """``result`` with the largest cluster's best-ranked member handed over first (then the
    rest of ``kept`` in its order); unchanged when nothing was probed (fewer than two verified
    candidates) or the probed candidates are not among those kept."""
    if probing is None or not probing.candidates:
        return result
    (winners, *_) = consensus_clusters(probing.observations)
    chosen = probing.candidates[winners[0]].retrieval_rank
    first = [item for item in result.kept if item.retrieval_rank == chosen]
    if not first:
        return result
    rest = [item for item in result.kept if item.retrieval_rank != chosen]
    return result.model_copy(update={"kept": (*first, *rest)})


def agree_result(result: GateResult) -> GateResult:
    """``result`` as the ``agree`` policy would have handed it over (its own question decides)."""
    kept = apply_policy(result.judged, Policy.AGREE, result.question)
    return result.model_copy(update={"policy": Policy.AGREE, "kept": tuple(kept)})
