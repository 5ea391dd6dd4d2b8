"""Who answers the gate's questions in the eval, and which inputs they must never be asked.

- The **oracle** (no `Answerer`): the canonical's answer, always right. An upper bound on a
  careful user, not a result.
- A **noisy answerer** (`noisy_answerer`): the canonical's answer, except for a fixed share of
  questions, where it confirms another answer the candidates gave (a user, or the agent's own
  model, picking the wrong option). Which questions get a wrong answer is decided by a hash of
  the seed, a key (the query and draw) and the round, so every run gives the same answers.

`hidden_inputs` names the inputs of a query's hidden tests (`probe_key` form): a question on one
of them would hand the gate a test of the ground truth itself, so the eval never asks it and
counts how often the gate would have (`guardrail_eval.asking`).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable

from guardrail.probe_seeds import test_calls
from guardrail.probes import Probe, call_probe
from guardrail.questions import Observation, Question
from guardrail.spec import Spec

__all__ = [
    "DEFAULT_NOISY_SHARE",
    "ProbeKey",
    "hidden_inputs",
    "is_wrong",
    "noisy_answerer",
    "probe_key",
]

DEFAULT_NOISY_SHARE = 0.2
"""The share of questions the noisy answerer of a default ``guardrail eval`` answers wrongly."""

ProbeKey = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]
"""An input as literal source texts: positional arguments, then keyword arguments."""


def probe_key(probe: Probe) -> ProbeKey:
    """The probe's input (its arguments' literal texts)."""
    return probe.args, probe.kwargs


def hidden_inputs(full: Spec, visible: Spec) -> frozenset[ProbeKey]:
    """The constant inputs the full suite calls its entry point with that the visible tests do
    not (read as the gate reads tests for probes: `guardrail.probe_seeds.test_calls`)."""

    def keys(spec: Spec) -> set[ProbeKey]:
        probes = (call_probe(spec.entry_point, call, "test") for call in test_calls(spec))
        return {probe_key(probe) for probe in probes if probe is not None}

    return frozenset(keys(full) - keys(visible))


def _unit(seed: int, key: str, round_: int, what: str) -> float:
    """A number in [0, 1) fixed by its arguments."""
    digest = hashlib.sha256(f"{seed}\0{key}\0{round_}\0{what}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def is_wrong(share: float, seed: int, key: str, round_: int) -> bool:
    """Whether the noisy answerer answers round ``round_`` of ``key`` wrongly."""
    return _unit(seed, key, round_, "wrong") < share


def noisy_answerer(
    share: float, seed: int, key: str
) -> Callable[[int, Question, Observation], Observation]:
    """An answerer that gives the canonical's answer, except in the rounds `is_wrong` picks,
    where it gives one of the question's other answers (picked by the same hash). A question
    whose every answer is the canonical's is answered rightly.

    Raises:
        ValueError: ``share`` is not between 0 and 1.
    """
    if not 0.0 <= share <= 1.0:
        raise ValueError(f"the share of wrong answers must be between 0 and 1, not {share}")

    def answer(round_: int, question: Question, truth: Observation) -> Observation:
        if not is_wrong(share, seed, key, round_):
            return truth
        others = [a.observation for a in question.answers if a.observation.key != truth.key]
        if not others:
            return truth
        return others[int(_unit(seed, key, round_, "which") * len(others))]

    return answer
