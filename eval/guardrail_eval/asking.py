"""The gate asks, someone answers: the eval's simulation of interactive disambiguation.

With thin tests several candidates verify; the gate's question (`guardrail.questions`) names an
input on which they disagree. The eval's answerer starts from the pool's canonical: its code is
run on that input through the same sandbox (`Gate.observe`), as interactive test-driven
disambiguation simulates its user, and the test fixing the answer joins the spec for the next
round. An `Answerer` may change that answer (`guardrail_eval.answerers.noisy_answerer` gives a
seeded share of wrong ones); without one the canonical's answer is given: an **oracle**, an upper
bound on a careful user, never a result.

Questions never ask a hidden test's input (``excluded``): such a question would hand the gate a
hidden test, the very test that then decides whether the code it picked is correct. The gate's
own question is kept beside the one asked (`AskRound.gate_question`), so the eval can count how
often the gate would have asked one.

`ask_rounds` returns every round: round 0 is the gate on the spec as given; each later one
follows one answered question. It stops when no question is left to ask (the verified
candidates agree on every input tried, or disagree only on hidden tests' inputs), when the
oracle's answer cannot be judged (it timed out or returned a value that cannot be compared: no
test can be written from it, so asking stops rather than guessing), or after ``max_questions``
answered questions (the last round still carries the question it raised, unanswered). An
``ask<Q>`` arm acts on the last round's ``kept``; it acted *silently* on buggy code when the
gate raised no question in that round.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guardrail.gate import (
    Candidate,
    Gate,
    GatedCandidate,
    GateResult,
    Policy,
    Probing,
    SpecArg,
)
from guardrail.questions import Observation, Question, pick_question
from guardrail.spec import Spec
from guardrail_eval.answerers import ProbeKey, probe_key

__all__ = ["DEFAULT_QUESTIONS", "Answerer", "AskRound", "RecordingGate", "ask_rounds"]

DEFAULT_QUESTIONS = 3
"""The ask arms of a default ``guardrail eval``: up to 1, 2 and 3 questions."""

Answerer = Callable[[int, Question, Observation], Observation]
"""``answer(round, question, canonical's answer)``: the answer given to round ``round``'s
question (0-based), knowing what the canonical did on its input."""


class RecordingGate(Gate):
    """A `Gate` that keeps what its last `gate` call probed (`Gate.probe_verified`), so the
    eval reads questions and consensus off the runs the gate made anyway."""

    last_probing: Probing | None = None

    def gate(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        *,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> GateResult:
        self.last_probing = None
        return super().gate(candidates, spec, policy=policy, ask=ask)

    def probe_verified(
        self, judged: Sequence[GatedCandidate], specs: Sequence[Spec | None]
    ) -> Probing | None:
        self.last_probing = super().probe_verified(judged, specs)
        return self.last_probing


@dataclass(frozen=True)
class AskRound:
    """One gate round.

    Attributes:
        result: the gate's result.
        question: the question asked (None: nothing left to ask, see the module docstring).
        answer: the answer given to it (None when nothing was asked, or for the last round's
            question once ``max_questions`` were answered).
        gate_question: the gate's own question (it may name a hidden test's input).
        probing: what the gate ran the verified candidates on, and what they did.
        truth: the canonical's answer, when it differs from ``answer`` or equals it.
    """

    result: GateResult
    question: Question | None
    answer: Observation | None
    gate_question: Question | None = None
    probing: Probing | None = None
    truth: Observation | None = None

    @property
    def wrong(self) -> bool:
        """The answer given is not the canonical's."""
        return self.answer is not None and self.truth is not None and self.answer != self.truth


def ask_rounds(
    gate: RecordingGate,
    candidates: Sequence[Candidate],
    spec: Spec,
    oracle_code: str,
    max_questions: int,
    *,
    metadata: Mapping[str, Any] | None = None,
    answerer: Answerer | None = None,
    excluded: frozenset[ProbeKey] = frozenset(),
) -> list[AskRound]:
    """Gate, ask, answer (``oracle_code``'s answer, through ``answerer`` if given), gate again:
    up to ``max_questions`` times; ``excluded`` inputs are never asked.

    ``metadata`` is the oracle's module context (`guardrail.context`), as a candidate's would
    be. Returns 1 to ``max_questions + 1`` rounds (see the module docstring); the gate asks in
    every round, even if it was built with ``ask=False``.
    """
    if max_questions < 0:
        raise ValueError(f"max_questions must be at least 0, not {max_questions}")
    rounds: list[AskRound] = []
    current = spec
    while True:
        result = gate.gate(candidates, current, ask=True)
        probing = gate.last_probing
        question = _askable(result.question, probing, excluded)
        if question is None or len(rounds) == max_questions:
            rounds.append(AskRound(result, question, None, result.question, probing))
            return rounds  # a last question stays unanswered
        ((truth,),) = gate.observe([oracle_code], current, [question.probe], metadata=[metadata])
        answer = truth
        if answerer is not None and truth.judged:
            answer = answerer(len(rounds), question, truth)
        rounds.append(AskRound(result, question, answer, result.question, probing, truth))
        test = question.test_for(answer) if answer.judged else None
        if test is None:
            return rounds  # the answer fixes no test: asking stops here
        current = Spec.build([*current.tests, test], current.entry_point, current.setup)


def _askable(
    asked: Question | None, probing: Probing | None, excluded: frozenset[ProbeKey]
) -> Question | None:
    """The gate's question, or when it names an excluded input the best question over the
    other inputs it tried (the same runs: nothing is run again); None when none is left."""
    if asked is None or probe_key(asked.probe) not in excluded:
        return asked
    if probing is None:
        return None
    keep = [i for i, probe in enumerate(probing.probes) if probe_key(probe) not in excluded]
    return pick_question(
        [probing.probes[i] for i in keep],
        [[row[i] for i in keep] for row in probing.observations],
        [item.candidate.id for item in probing.candidates],
        [item.retrieval_rank for item in probing.candidates],
    )
