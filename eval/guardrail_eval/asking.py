"""The gate asks, an oracle answers: the eval's simulation of interactive disambiguation.

With thin tests several candidates verify; the gate's question (`guardrail.questions`) names an
input on which they disagree. Here the oracle is the pool's canonical: its code is run on that
input through the same sandbox (`Gate.observe`), as interactive test-driven disambiguation
simulates its user, and the test fixing its answer joins the spec for the next round.

`ask_rounds` returns every round: round 0 is the gate on the spec as given; each later one
follows one answered question. It stops when the gate raises no question (the verified
candidates agree on every input tried), when the oracle's answer cannot be judged (it timed out
or returned a value that cannot be compared: no test can be written from it, so asking stops
rather than guessing), or after ``max_questions`` answered questions (the last round still
carries the question it raised, unanswered). An ``ask<Q>`` arm acts on the last round's
``kept``; it acted *silently* on buggy code when that round raised no question.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from guardrail.gate import Candidate, Gate, GateResult
from guardrail.questions import Observation, Question
from guardrail.spec import Spec

__all__ = ["DEFAULT_QUESTIONS", "AskRound", "ask_rounds"]

DEFAULT_QUESTIONS = 3
"""The ask arms of a default ``guardrail eval``: up to 1, 2 and 3 questions."""


@dataclass(frozen=True)
class AskRound:
    """One gate round: its result, the question it raised (None: the verified candidates
    agreed, or fewer than two verified) and the oracle's answer to it (None when there was no
    question, or for the last round's question once ``max_questions`` were answered)."""

    result: GateResult
    question: Question | None
    answer: Observation | None


def ask_rounds(
    gate: Gate,
    candidates: Sequence[Candidate],
    spec: Spec,
    oracle_code: str,
    max_questions: int,
    *,
    metadata: Mapping[str, Any] | None = None,
) -> list[AskRound]:
    """Gate, ask, let ``oracle_code`` answer, gate again: up to ``max_questions`` times.

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
        question = result.question
        if question is None or len(rounds) == max_questions:
            rounds.append(AskRound(result, question, None))  # a last question stays unanswered
            return rounds
        ((answer,),) = gate.observe([oracle_code], current, [question.probe], metadata=[metadata])
        rounds.append(AskRound(result, question, answer))
        test = question.test_for(answer) if answer.judged else None
        if test is None:
            return rounds  # the oracle's answer fixes no test: asking stops here
        current = Spec.build([*current.tests, test], current.entry_point, current.setup)
