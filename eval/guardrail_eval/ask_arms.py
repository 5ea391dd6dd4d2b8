"""The arms of one visible-test setting, read off the gate's rounds for one (query, draw).

`query_arms` calls `guardrail_eval.asking.ask_rounds` with the largest Q and an oracle, and
reads every arm off what it ran:

- ``visible<N>`` is round 0 (the gate as it is: it finds a question but gets no answer);
- ``visible<N>+consensus`` is round 0 with the largest agreeing cluster's best member first
  (`guardrail_eval.consensus`), from the probe runs round 0 made: nothing runs again;
- ``visible<N>+agree`` is round 0 under the ``agree`` policy: nothing when round 0 raised a
  question (`guardrail_eval.consensus.agree_result`); nothing runs again either;
- ``visible<N>+oracle-ask<q>`` is round ``min(q, last)`` of the oracle's rounds: an upper bound;
- ``visible<N>+noisy-ask<q>``, the same with a noisy answerer (`guardrail_eval.answerers`); it
  repeats the oracle's rounds until its first wrong answer (the verdict cache answers them), so
  only the rounds after a wrong answer cost new sandbox runs.

Each round is a real gate run (the verdict cache may answer it); the answers start from the
pool's canonical run on the question's input in the same sandbox. The cost of round q is what an
agent would have paid to get there: the wall clock and sandbox runs from the start of round 0 to
the end of round q's gate call (the answerer's runs included).
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guardrail.cache import VerdictCache
from guardrail.gate import Candidate, GateResult, Policy, SpecArg
from guardrail.spec import Spec
from guardrail_eval.answerers import ProbeKey, noisy_answerer, probe_key
from guardrail_eval.arms import GateCost
from guardrail_eval.asking import Answerer, AskRound, RecordingGate, ask_rounds
from guardrail_eval.consensus import agree_result, consensus_result
from guardrail_eval.faults import RetryingSandbox

__all__ = ["AskRun", "MeteredGate", "QueryArms", "ask_runs", "query_arms"]


@dataclass(frozen=True, slots=True)
class AskRun:
    """What the agent gets after up to ``questions`` questions (the arm's round).

    Attributes:
        result: the gate result it acts on.
        cost: the cumulative cost up to this round.
        questions: questions asked and answered before this round.
        silent: the gate raised no question in this round (the verified candidates agreed, or
            fewer than two verified): acting on buggy code here is acting on it silently.
        hidden_probe: the gate's own question, in this round or one before, was on a hidden
            test's input (it was never asked: another question, or none, was).
        wrong: answers before this round that were not the canonical's.
    """

    result: GateResult
    cost: GateCost
    questions: int
    silent: bool
    hidden_probe: bool = False
    wrong: int = 0


@dataclass(frozen=True, slots=True)
class QueryArms:
    """One (query, draw): the oracle's runs for q = 0..Q, the noisy answerer's for q = 1..Q
    (empty without one), the consensus run and the agree run."""

    oracle: list[AskRun]
    noisy: list[AskRun]
    consensus: AskRun
    agree: AskRun


class MeteredGate(RecordingGate):
    """A gate that records, after every `gate` call, the time and the sandbox's job count."""

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


def query_arms(
    gate: MeteredGate,
    candidates: Sequence[Candidate],
    spec: Spec,
    oracle_code: str,
    max_questions: int,
    *,
    oracle_metadata: Mapping[str, Any] | None = None,
    excluded: frozenset[ProbeKey] = frozenset(),
    noisy: tuple[float, int, str] | None = None,
) -> QueryArms:
    """Every arm of one (query, draw); ``noisy`` is (share, seed, key) of the noisy answerer,
    None for none (or no questions); ``excluded`` are the hidden tests' inputs."""
    rounds, oracle = _rounds_and_runs(
        gate,
        candidates,
        spec,
        oracle_code,
        max_questions,
        oracle_metadata=oracle_metadata,
        excluded=excluded,
    )
    first = oracle[0]
    consensus = AskRun(
        consensus_result(first.result, rounds[0].probing),
        first.cost,
        0,
        first.silent,
        first.hidden_probe,
    )
    agree = AskRun(agree_result(first.result), first.cost, 0, first.silent, first.hidden_probe)
    noisy_runs: list[AskRun] = []
    if noisy is not None and max_questions > 0:
        share, seed, key = noisy
        _, noisy_all = _rounds_and_runs(
            gate,
            candidates,
            spec,
            oracle_code,
            max_questions,
            oracle_metadata=oracle_metadata,
            excluded=excluded,
            answerer=noisy_answerer(share, seed, key),
        )
        noisy_runs = noisy_all[1:]
    return QueryArms(oracle, noisy_runs, consensus, agree)


def ask_runs(
    gate: MeteredGate,
    candidates: Sequence[Candidate],
    spec: Spec,
    oracle_code: str,
    max_questions: int,
    *,
    oracle_metadata: Mapping[str, Any] | None = None,
    excluded: frozenset[ProbeKey] = frozenset(),
    answerer: Answerer | None = None,
) -> list[AskRun]:
    """One `AskRun` per q = 0..max_questions (rounds past the last repeat the last).

    ``oracle_metadata`` is the oracle's module context, as its candidates' (a real-code pool)."""
    return _rounds_and_runs(
        gate,
        candidates,
        spec,
        oracle_code,
        max_questions,
        oracle_metadata=oracle_metadata,
        excluded=excluded,
        answerer=answerer,
    )[1]


def _rounds_and_runs(
    gate: MeteredGate,
    candidates: Sequence[Candidate],
    spec: Spec,
    oracle_code: str,
    max_questions: int,
    *,
    oracle_metadata: Mapping[str, Any] | None,
    excluded: frozenset[ProbeKey],
    answerer: Answerer | None = None,
) -> tuple[list[AskRound], list[AskRun]]:
    """`ask_rounds`, and one `AskRun` per q read off them."""
    gate.marks.clear()
    started, runs_before = time.perf_counter(), gate.counter.jobs
    rounds = ask_rounds(
        gate,
        candidates,
        spec,
        oracle_code,
        max_questions,
        metadata=oracle_metadata,
        answerer=answerer,
        excluded=excluded,
    )
    marks = list(gate.marks)
    runs: list[AskRun] = []
    for q in range(max_questions + 1):
        index = min(q, len(rounds) - 1)
        round_ = rounds[index]
        before = rounds[:index]
        at, jobs = marks[index]
        hits = sum(1 for item in round_.result.judged if item.verdict.cached)
        cost = GateCost(at - started, jobs - runs_before, hits, len(round_.result.judged))
        runs.append(
            AskRun(
                round_.result,
                cost,
                _answered(before),
                round_.result.question is None,
                _hidden(rounds[: index + 1], excluded),
                sum(1 for done in before if done.wrong),
            )
        )
    return rounds, runs


def _answered(before: Sequence[AskRound]) -> int:
    """Questions answered in the rounds before this one (each answered one led to a round)."""
    return sum(1 for round_ in before if round_.answer is not None)


def _hidden(rounds: Sequence[AskRound], excluded: frozenset[ProbeKey]) -> bool:
    """The gate's own question was on a hidden test's input in one of ``rounds``."""
    return any(
        round_.gate_question is not None and probe_key(round_.gate_question.probe) in excluded
        for round_ in rounds
    )
