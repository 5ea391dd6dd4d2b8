"""The ask arms: the gate with N visible tests, allowed up to Q questions an oracle answers.

For one (query, draw) `ask_runs` calls `guardrail_eval.asking.ask_rounds` once with the largest
Q and reads every arm off its rounds: ``visible<N>`` is round 0 (the gate as it is, which asks
but gets no answer), ``visible<N>+ask<q>`` is round ``min(q, last)``. Each round is a real gate
run (the verdict cache may answer it); the oracle's answer is the pool's canonical run on the
question's input in the same sandbox.

The cost of round q is what an agent would have paid to get there: the wall clock and sandbox
runs from the start of round 0 to the end of round q's gate call (the oracle's runs included).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

from guardrail.cache import VerdictCache
from guardrail.gate import Candidate, Gate, GateResult, Policy, SpecArg
from guardrail.spec import Spec
from guardrail_eval.arms import GateCost
from guardrail_eval.asking import AskRound, ask_rounds
from guardrail_eval.faults import RetryingSandbox

__all__ = ["AskRun", "MeteredGate", "ask_runs"]


@dataclass(frozen=True, slots=True)
class AskRun:
    """What the agent gets after up to ``questions`` questions (the arm's round).

    Attributes:
        result: the gate result it acts on.
        cost: the cumulative cost up to this round.
        questions: questions asked and answered before this round.
        silent: this round raised no question (the verified candidates agreed, or fewer than
            two verified): acting on buggy code here is acting on it silently.
    """

    result: GateResult
    cost: GateCost
    questions: int
    silent: bool


class MeteredGate(Gate):
    """A `Gate` that records, after every `gate` call, the time and the sandbox's job count."""

    def __init__(
        self, sandbox: RetryingSandbox, *, cache: VerdictCache | bool, policy: Policy
    ) -> None:
        super().__init__(sandbox, cache=cache, policy=policy)
        self.counter = sandbox
        self.marks: list[tuple[float, int]] = []

    def gate(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        *,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> GateResult:
        result = super().gate(candidates, spec, policy=policy, ask=ask)
        self.marks.append((time.perf_counter(), self.counter.jobs))
        return result


def ask_runs(
    gate: MeteredGate,
    candidates: Sequence[Candidate],
    spec: Spec,
    oracle_code: str,
    max_questions: int,
) -> list[AskRun]:
    """One `AskRun` per q = 0..max_questions (rounds past the last repeat the last)."""
    gate.marks.clear()
    started, runs_before = time.perf_counter(), gate.counter.jobs
    rounds = ask_rounds(gate, candidates, spec, oracle_code, max_questions)
    marks = list(gate.marks)
    runs: list[AskRun] = []
    for q in range(max_questions + 1):
        index = min(q, len(rounds) - 1)
        round_ = rounds[index]
        answered = _answered(rounds[:index])
        at, jobs = marks[index]
        hits = sum(1 for item in round_.result.judged if item.verdict.cached)
        cost = GateCost(at - started, jobs - runs_before, hits, len(round_.result.judged))
        runs.append(AskRun(round_.result, cost, answered, round_.question is None))
    return runs


def _answered(before: Sequence[AskRound]) -> int:
    """Questions answered in the rounds before this one (each answered one led to a round)."""
    return sum(1 for round_ in before if round_.answer is not None)
