"""When candidates that pass the tests disagree: the `Question` the gate asks.

The gate runs the verified candidates on generated inputs (`guardrail.probes`) in the sandbox
(`Gate.observe`), and the judge records what each returned or raised (an `Observation`). A
question is the probe whose judged answers split the candidates most evenly (the highest entropy
of the answer groups; candidates the judge could not judge on it do not count; ties go to the
earliest probe), with each distinct answer, who gives it, and a test that fixes it, ready to paste
into the spec: ``assert f(3) == [1, 2]`` when the value's text reads back as a literal with the
same equality key, a ``try``/``except``/``else`` test for "raises X", else no test.

What a call gave is settled before it is compared (`guardrail.settling`): an iterator is
drained, and its answer reads "yields [1, 2, 3]" ("and more" past the drain limit, "then
raises X" when draining raised), with the test ``assert list(f(3)) == [1, 2, 3]`` when it was
exhausted (a prefix or a late raise has no ready-made test); a coroutine is run, and its answer
reads "... once awaited" (no ready-made test: a test's own ``asyncio.run`` cannot drive the
candidate's coroutine from the judge).

Candidate-made text (ids, values, exception names) is data: `Question.render` gives plain text
whose every such string is `guardrail.safetext` clean and capped; never print it as markup.
"""

from __future__ import annotations

import ast
import builtins
import math
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict, computed_field

from guardrail.probe_functions import is_pure_function
from guardrail.probes import Probe
from guardrail.safetext import clean, one_line
from guardrail.sandbox.runner.observing import key_of
from guardrail.settling import NOT_COMPARED_ERROR, plain, read, unwrapped
from guardrail.verdict import Observation, Verdict

__all__ = ["Answer", "Observation", "Question", "answer_test", "observations_of", "pick_question"]


class Answer(BaseModel):
    """One distinct answer to a question, and which candidates give it (retrieval order)."""

    model_config = ConfigDict(frozen=True)

    observation: Observation
    candidate_ids: tuple[str, ...]
    retrieval_ranks: tuple[int, ...]
    test: str | None  # a test asserting this answer; None when no literal assert says it

    @computed_field  # type: ignore[prop-decorator]
    @property
    def words(self) -> str:
        """The answer in words: ``returns [1, 2]``, ``raises ValueError``, ``yields [1, 2]``
        (`guardrail.settling.Reading.words`); never the judge's tagged text."""
        if self.observation.kind == "value":
            return read(self.observation.text).words
        return f"{self.observation.kind} {self.observation.text}"


class Question(BaseModel):
    """An input on which the verified candidates disagree, with each answer (largest first)."""

    model_config = ConfigDict(frozen=True)

    probe: Probe
    answers: tuple[Answer, ...]

    def test_for(self, observation: Observation) -> str | None:
        """The test that fixes ``observation`` as the answer to this question's input (also an
        answer no candidate gave, such as the user's or an oracle's); None if it has none."""
        return answer_test(self.probe, observation)

    def render(self, names: Mapping[str, str] | None = None) -> str:
        """Plain text for a person or an LLM: the input, each answer, who gives it, its test.

        ``names`` maps candidate ids to what a person knows them by (``file:line``); an id it
        does not name is shown as it is."""
        names = names or {}
        total = sum(len(answer.candidate_ids) for answer in self.answers)
        lines = [
            f"QUESTION: the {total} candidates that pass the tests disagree on"
            f" {one_line(self.probe.call, 500)}",
            "Which answer is right? Add its test to your tests and search again:",
        ]
        for letter, answer in zip(_LETTERS, self.answers, strict=False):
            who = ", ".join(  # ranks shown 1-based, as a person counts
                f"{_named(cid, names)} (rank {rank + 1})"
                for cid, rank in zip(answer.candidate_ids, answer.retrieval_ranks, strict=True)
            )
            count = len(answer.candidate_ids)
            lines.append(
                f"  {letter}) {_shown(self.probe, answer.observation)}: {count} candidate"
                f"{'s' if count != 1 else ''}: {who}"
            )
            if answer.test is None:
                lines.append("     (no ready-made test: no literal assert says this answer)")
            else:
                lines.append("     test:")
                lines += [f"       {line}" for line in clean(answer.test, 3000).splitlines()]
        return "\n".join(lines)


_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_NAME_SHOWN = 80


def _named(candidate_id: str, names: Mapping[str, str]) -> str:
    """A candidate as a person knows it: its name (a path's end kept: ``…/pkg/text.py:3``) or
    its id (its start kept); one clean line of at most `_NAME_SHOWN` characters."""
    if candidate_id not in names:
        return one_line(candidate_id, _NAME_SHOWN) or "(no id)"
    name = one_line(names[candidate_id], 4 * _NAME_SHOWN)
    return name if len(name) <= _NAME_SHOWN else "…" + name[1 - _NAME_SHOWN :]


def _shown(probe: Probe, observation: Observation) -> str:
    if observation.kind == "raises":
        return f"raises {observation.text}"
    shown = one_line(read(observation.text).words, 300)
    if _changes_arguments(probe, observation):
        states = ", ".join(one_line(text, 200) for text in observation.after)
        shown += f", leaving its mutable arguments as {states}"
    return shown


def _changes_arguments(probe: Probe, observation: Observation) -> bool:
    """Whether the answer left a mutable argument other than it was given (unknown: True)."""
    _, bindings = _named_call(probe)
    if len(bindings) != len(observation.after):
        return bool(observation.after)
    try:
        return any(
            key_of(ast.literal_eval(after)) != key_of(ast.literal_eval(given))
            for (_, given), after in zip(bindings, observation.after, strict=True)
        )
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return True


def answer_test(probe: Probe, observation: Observation) -> str | None:
    """A test that passes exactly for code answering ``observation`` on ``probe``'s input."""
    if observation.kind == "raises":
        return _raises_test(probe, observation.text)
    if observation.kind != "value":
        return None
    call, bindings = _named_call(probe)
    try:
        value = ast.literal_eval(observation.text)
        after = [ast.literal_eval(text) for text in observation.after]
        # Faithful: not capped, and reads back to the value (and states) the key names.
        faithful = key_of((value, tuple(after)) if after else value) == observation.key
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    awaited, ending, payload = unwrapped(value)
    # A prefix, a late raise or an iterator inside says more than one assert can; a
    # coroutine's result is awaited in the candidate's process, where a test cannot reach.
    told = not awaited and ending in (None, "exhausted") and plain(payload)
    if not faithful or not told or len(after) != len(bindings):
        return None
    expected = repr(payload) if ending else observation.text
    lines = [f"{name} = {text}" for name, text in bindings]
    lines.append(f"assert {f'list({call})' if ending else call} == {expected}")
    lines += [
        f"assert {name} == {text}"
        for (name, _), text in zip(bindings, observation.after, strict=True)
    ]
    return "\n".join(lines)


def _raises_test(probe: Probe, name: str) -> str:
    """The test that the call raises ``name`` (a builtin's family caught as itself), at once or
    at a returned iterator's first item, as the judge settled it: a generator runs no line of
    its body before its first ``next``."""
    family = getattr(builtins, name, None)
    catch = "Exception" if isinstance(family, type) and issubclass(family, Exception) else None
    return (
        f"try:\n    returned = {probe.call}\n"
        "    if hasattr(returned, '__next__') and iter(returned) is returned:\n"
        "        next(returned, None)\n"
        f"except {catch or 'BaseException'} as exc:\n"
        f"    assert type(exc).__name__ == {name!r}, f'raised {{type(exc).__name__}}'\n"
        f"else:\n    raise AssertionError('expected {name}, nothing was raised')"
    )


def _named_call(probe: Probe) -> tuple[str, list[tuple[str, str]]]:
    """The probe's call with each mutable argument bound to a name first (``arg1``... by
    position, ``<keyword>_arg`` by keyword), in the order the judge reports their states after
    the call; and those ``(name, source text)`` bindings."""
    bindings: list[tuple[str, str]] = []

    def named(text: str, name: str) -> str:
        if is_pure_function(text) or type(ast.literal_eval(text)) not in _MUTABLE:
            return text
        bindings.append((name, text))
        return name

    args = [named(text, f"arg{index}") for index, text in enumerate(probe.args, start=1)]
    kwargs = [f"{key}={named(text, f'{key}_arg')}" for key, text in probe.kwargs]
    return f"{probe.entry_point}({', '.join([*args, *kwargs])})", bindings


_MUTABLE = (list, dict, set)  # the mutable types a literal can build


def observations_of(verdict: Verdict, probes: Sequence[Probe]) -> list[Observation]:
    """One observation per probe from the verdict of a probe job (`Gate.observe`): what the
    judge recorded on a test it judged, else ``unjudged`` saying why."""
    tests = verdict.tests
    if len(tests) != len(probes):  # it never got to its tests (did not load, a sandbox fault)
        why = f"{verdict.status.value}: {verdict.reason.value}"
        return [Observation.unjudged(why) for _ in probes]
    found = []
    for outcome, probe in zip(tests, probes, strict=True):
        if outcome.test == probe.test and outcome.fault is None and outcome.observed is not None:
            found.append(outcome.observed)
        elif outcome.outcome == f"ERROR:{NOT_COMPARED_ERROR}":  # an async generator
            found.append(Observation.unjudged(outcome.detail or "not compared"))
        else:
            why = outcome.fault.value if outcome.fault is not None else outcome.outcome
            found.append(Observation.unjudged(why))
    return found


def pick_question(
    probes: Sequence[Probe],
    observations: Sequence[Sequence[Observation]],
    ids: Sequence[str],
    ranks: Sequence[int],
) -> Question | None:
    """The probe whose judged answers split the candidates most evenly, as a `Question`; None
    when they agree (or are unjudged) on every probe. ``observations[c][p]`` is candidate
    ``c``'s on probe ``p``; ``ids`` and ``ranks`` name the candidates, in retrieval order."""
    best: tuple[float, int, dict[str, list[int]]] | None = None
    for index in range(len(probes)):
        groups: dict[str, list[int]] = {}
        for candidate, seen in enumerate(observations):
            if seen[index].judged:
                groups.setdefault(seen[index].key, []).append(candidate)
        if len(groups) < 2:
            continue
        spread = _entropy(sorted(len(members) for members in groups.values()))
        if best is None or spread > best[0] + 1e-9:  # strictly better: the earliest wins ties
            best = (spread, index, groups)
    if best is None:
        return None
    _, index, groups = best
    ordered = sorted(groups.values(), key=lambda members: (-len(members), ranks[members[0]]))
    probe = probes[index]
    answers = []
    for members in ordered:
        observation = observations[members[0]][index]
        answers.append(
            Answer(
                observation=observation,
                candidate_ids=tuple(ids[m] for m in members),
                retrieval_ranks=tuple(ranks[m] for m in members),
                test=answer_test(probe, observation),
            )
        )
    return Question(probe=probe, answers=tuple(answers))


def _entropy(sizes: list[int]) -> float:
    total = sum(sizes)
    return -sum(size / total * math.log(size / total) for size in sizes)
