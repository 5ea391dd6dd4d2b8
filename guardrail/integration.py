"""Framework-neutral plumbing for the LangChain and LlamaIndex integrations.

No verification logic lives in an integration: each one turns its framework's objects (Documents,
nodes) into `Candidate` objects, asks `plan_gate` for their specs, hands ``plan.candidates`` and
``plan.specs`` to `Gate.gate` or `Gate.agate` (the only difference between a sync and an async
path), and attaches the metadata of `GatePlan.kept` to copies of its objects under `METADATA_KEY`.
Both integrations therefore choose specs by the same rules and write the same verdict shape,
and show the same metadata: `public_metadata` leaves host paths out unless asked.

When the gate asks (verified candidates disagree, `guardrail.questions`), every object handed
over for that query carries the question under `QUESTION_KEY` (`question_metadata`).

Candidates that ran and failed are never handed over (nor, under the ``agree`` policy, verified
ones that disagree on the gate's question), so a caller that must explain an empty answer (the
LangChain tool, the LlamaIndex query engine) opens `collecting_dropped` around its retrieval:
every gated retriever or postprocessor called inside reports there the objects it did not hand
over, with their verdicts and the question (`GatePlan.dropped`, `report_dropped`), and
`guardrail.verdict_text.nothing_handed_over` says what they returned or where they disagree.

Every key that starts with `GATE_KEY_PREFIX` (in any case: ``guardrail``, ``guardrail_verdict``,
``GuardRail_question``...) belongs to the gate: one that came with a retrieved object (a planted
corpus entry, a node gated twice) is always dropped (`public_metadata`), so what an LLM or a user
reads about a verdict comes from the gate's own verdict of this call only.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Generic, TypeAlias, TypeVar

from guardrail.errors import SpecError
from guardrail.gate import Candidate, GatedCandidate, GateResult, Policy
from guardrail.precheck import parse
from guardrail.questions import Question
from guardrail.sources import SpecSource, resolve
from guardrail.spec import Spec, spec_size_problem
from guardrail.verdict import Status, Verdict

__all__ = [
    "DROPPED",
    "GATE_KEY_PREFIX",
    "JUDGED_AGAINST",
    "METADATA_KEY",
    "PATH_KEYS",
    "QUESTION_KEY",
    "GatePlan",
    "Tests",
    "check_tests",
    "collecting_dropped",
    "gate_owned",
    "plan_gate",
    "public_metadata",
    "question_from_metadata",
    "question_metadata",
    "report_dropped",
    "verdict_from_metadata",
    "verdict_metadata",
]

METADATA_KEY = "guardrail"
"""The one metadata key a verdict is stored under, in Documents and nodes alike."""

QUESTION_KEY = "guardrail_question"
"""The metadata key of the gate's question (`question_metadata`), on every object of a query."""

GATE_KEY_PREFIX = "guardrail"
"""Metadata keys starting with this, compared case-insensitively, are the gate's own."""

Tests: TypeAlias = Sequence[str] | Spec
"""Test statements (``["assert add(1, 2) == 3", ...]``) or a ready `Spec` (with setup)."""

Item = TypeVar("Item")

JUDGED_AGAINST: Mapping[SpecSource, str] = {
    SpecSource.QUERY: "query tests",
    SpecSource.PROVIDER: "provider tests",
    SpecSource.STORED: "its own stored tests",
    SpecSource.DOCTEST: "its own doctests",
    SpecSource.NONE: "nothing",
}
"""What a verdict was judged against, in words, by where its spec came from: code that passed
only its own doctests says so, never as if it had passed tests written for the query."""

PATH_KEYS = ("root",)
"""Metadata keys that hold absolute host paths only (the package root the gate imports from)."""


def question_metadata(result: GateResult) -> dict[str, Any]:
    """``{QUESTION_KEY: ...}`` for the objects handed over from ``result``, or ``{}`` when the
    gate asked nothing: `Question.model_dump(mode="json")` plus ``rendered``, its plain text
    (`Question.render`, with each answer's ready-to-paste test)."""
    question = result.question
    if question is None:
        return {}
    return {QUESTION_KEY: {**question.model_dump(mode="json"), "rendered": question.render()}}


def question_from_metadata(metadata: Mapping[str, Any]) -> Question | None:
    """The `Question` stored under `QUESTION_KEY` (``None`` if there is none).

    Raises:
        pydantic.ValidationError: the value under `QUESTION_KEY` is not a question.
    """
    stored = metadata.get(QUESTION_KEY)
    return None if stored is None else Question.model_validate(stored)


DROPPED = frozenset({Status.FAILED, Status.ERROR, Status.TIMEOUT})
"""Statuses every policy drops: the candidate ran against tests and did not pass them."""

_DROPPED: ContextVar[list[Any] | None] = ContextVar("guardrail_dropped", default=None)


@contextmanager
def collecting_dropped() -> Iterator[list[Any]]:
    """A list that fills, for the gated calls made inside, with the framework objects the gate
    did not hand over for what they did when they ran (`GatePlan.dropped`: failed, errored,
    timed out, or withheld under ``agree``), each carrying its verdict under `METADATA_KEY`
    (and the question under `QUESTION_KEY`), in the order the calls reported them.

    A context variable carries it, so it reaches the retriever through LangChain's and
    LlamaIndex's own call machinery (their copied contexts share the list) and concurrent
    calls in other contexts never see each other's.
    """
    dropped: list[Any] = []
    token = _DROPPED.set(dropped)
    try:
        yield dropped
    finally:
        _DROPPED.reset(token)


def report_dropped(items: Iterable[Any]) -> None:
    """Add ``items`` to the innermost `collecting_dropped` list; nothing when none is open."""
    dropped = _DROPPED.get()
    if dropped is not None:
        dropped.extend(items)


def check_tests(tests: object) -> Tests | None:
    """``tests`` unchanged if they are test statements, a `Spec` or ``None``.

    Raises:
        TypeError: one test given as a bare string (it would iterate by character), or anything
            else that is not a sequence of strings.
    """
    if isinstance(tests, str):
        raise TypeError(
            f"tests must be a list of test statements or a Spec, not one string: {tests[:60]!r};"
            " wrap it in a list"
        )
    if tests is None or isinstance(tests, Spec):
        return tests
    if not isinstance(tests, Sequence) or not all(isinstance(t, str) for t in tests):
        raise TypeError(f"tests must be a list of strings or a Spec, got {tests!r:.200}")
    return tests


def verdict_metadata(
    gated: GatedCandidate, *, spec_source: SpecSource, policy: Policy
) -> dict[str, Any]:
    """The JSON-serialisable dict stored under `METADATA_KEY` for one gated candidate.

    `Verdict.model_dump(mode="json")` (status, reason, message, per-test outcomes, alias,
    duration, truncated output, cache hit) plus ``verified``, ``passed_tests``, ``failed_tests``,
    ``outcomes``, ``spec_source`` (where the tests came from, a `SpecSource` value),
    ``judged_against`` (the same in words, `JUDGED_AGAINST`), ``retrieval_rank`` (0-based place
    in the base retriever's results), ``retrieval_score`` (its score, ``None`` when it gave
    none) and ``policy``. Plain strings, numbers and lists only, so
    it survives JSON and the frameworks' own serialisation unchanged.
    """
    verdict = gated.verdict
    return {
        **verdict.model_dump(mode="json"),
        "verified": verdict.verified,
        "passed_tests": verdict.passed_tests,
        "failed_tests": verdict.failed_tests,
        "outcomes": verdict.outcomes,
        "spec_source": spec_source.value,
        "judged_against": JUDGED_AGAINST[spec_source],
        "retrieval_rank": gated.retrieval_rank,
        "retrieval_score": gated.candidate.score,
        "policy": policy.value,
    }


def public_metadata(metadata: Mapping[str, Any], *, include_paths: bool = False) -> dict[str, Any]:
    """``metadata`` as an integration hands it over: without absolute host paths by default.

    ``root`` (where the package lives on the host) is left out, and an absolute ``file`` becomes
    relative to ``root`` (its bare name when it is not under ``root``): the gate reads both from
    the retrieved item, the caller and the LLM need neither. ``include_paths=True`` keeps them.
    Keys the gate owns (`gate_owned`) that came with the item are always dropped: only the
    gate sets them, for this call.
    """
    own = {key: value for key, value in metadata.items() if not gate_owned(key)}
    if include_paths:
        return own
    shown = {key: value for key, value in own.items() if key not in PATH_KEYS}
    file = metadata.get("file")
    if isinstance(file, str) and PurePath(file).is_absolute():
        shown["file"] = _relative(PurePath(file), metadata.get("root"))
    return shown


def gate_owned(key: object) -> bool:
    """Whether a metadata key is the gate's (it starts with `GATE_KEY_PREFIX`, in any case)."""
    return isinstance(key, str) and key.strip().casefold().startswith(GATE_KEY_PREFIX)


def _relative(file: PurePath, root: object) -> str:
    if isinstance(root, str) and file.is_relative_to(root):
        return file.relative_to(root).as_posix()
    return file.name


def verdict_from_metadata(metadata: Mapping[str, Any]) -> Verdict | None:
    """The `Verdict` stored under `METADATA_KEY` (``None`` if there is none).

    Raises:
        pydantic.ValidationError: the value under `METADATA_KEY` is not a verdict.
    """
    stored = metadata.get(METADATA_KEY)
    return None if stored is None else Verdict.model_validate(stored)


@dataclass(frozen=True)
class GatePlan(Generic[Item]):
    """What to hand the gate for one batch of framework items, and how to map its answer back.

    The four tuples are parallel, in retrieval order: ``candidates[i]`` is ``items[i]`` as the
    gate sees it, verified against ``specs[i]`` (``None``: unverifiable) from ``sources[i]``.
    """

    items: tuple[Item, ...]
    candidates: tuple[Candidate, ...]
    specs: tuple[Spec | None, ...]
    sources: tuple[SpecSource, ...]

    def kept(
        self, result: GateResult, limit: int | None = None
    ) -> list[tuple[Item, dict[str, Any]]]:
        """The items the policy kept, in its order, at most ``limit``, each with its metadata.

        ``result`` is the gate's answer for ``candidates``; the metadata is `verdict_metadata`.
        """
        kept = result.kept if limit is None else result.kept[:limit]
        return [self._with_metadata(gated, result) for gated in kept]

    def dropped(self, result: GateResult) -> list[tuple[Item, dict[str, Any]]]:
        """The items that ran against tests and were not handed over for what they did: dropped
        (status in `DROPPED`), or verified and withheld because they disagree on the gate's
        question (the ``agree`` policy); in retrieval order, each with its `verdict_metadata`."""
        kept = {gated.retrieval_rank for gated in result.kept}
        withheld = result.policy is Policy.AGREE and result.question is not None
        return [
            self._with_metadata(gated, result)
            for gated in sorted(result.judged, key=lambda gated: gated.retrieval_rank)
            if gated.retrieval_rank not in kept
            and (
                gated.verdict.status in DROPPED
                or (withheld and gated.verdict.status is Status.VERIFIED)
            )
        ]

    def _with_metadata(
        self, gated: GatedCandidate, result: GateResult
    ) -> tuple[Item, dict[str, Any]]:
        rank = gated.retrieval_rank
        return self.items[rank], verdict_metadata(
            gated, spec_source=self.sources[rank], policy=result.policy
        )


def plan_gate(
    items: Sequence[Item],
    candidates: Sequence[Candidate],
    query_tests: Tests | None,
    *,
    provider: Callable[[Item], object] | None = None,
    setup: str = "",
    entry_point: str | None = None,
) -> GatePlan[Item]:
    """Each candidate's spec, from the strongest source that has tests (`SpecSource`).

    Tests given with the query decide for every candidate; without them (``None`` or empty)
    ``provider(item)`` may give tests for one item (source ``provider``); else the tests stored
    with the snippet decide (`guardrail.sources.resolve`: ``stored`` or ``doctest``); else there
    are none (``none``: unverifiable). ``setup`` and ``entry_point`` go with query and provider
    tests given as statements; stored tests carry their own.

    Args:
        items: the framework's objects, in retrieval order.
        candidates: ``items`` as candidates, one each, in the same order.
        query_tests: tests every candidate must pass, or ``None``.
        provider: per-item tests (statements, a `Spec`, or ``None`` to fall back).

    Raises:
        guardrail.errors.SpecError: tests that do not parse, or that read no name the code could
            define (they would pass for any code), before anything runs.
        TypeError: query tests or a provider's answer that are not tests (see `check_tests`).
        ValueError: ``items`` and ``candidates`` of different lengths.
    """
    query_tests = _exercising(check_tests(query_tests), setup)
    specs: list[Spec | None] = []
    sources: list[SpecSource] = []
    for item, candidate in zip(items, candidates, strict=True):
        provided = (
            _exercising(check_tests(provider(item)), setup)
            if provider and not query_tests
            else None
        )
        resolved = resolve(
            candidate, provided or query_tests or None, setup=setup, entry_point=entry_point
        )
        specs.append(resolved.spec)
        # Provider tests are never empty here, so `resolve` took them as query tests.
        sources.append(SpecSource.PROVIDER if provided else resolved.source)
    return GatePlan(tuple(items), tuple(candidates), tuple(specs), tuple(sources))


def _exercising(tests: Tests | None, setup: str) -> Tests | None:
    """``tests`` unchanged, unless they are statements that read no name the code could define.

    Such tests (``assert [1] == [1]``, or ones that only use what the setup imports) would pass
    for every candidate, the entry point being taken from each candidate's metadata when the
    tests name none: refused, so that no candidate is verified by tests that never ran it. A
    ready `Spec` is taken as its author wrote it.

    Raises:
        SpecError: the tests read only builtins and names they or the setup bind.
    """
    if not tests or isinstance(tests, Spec) or spec_size_problem(tests, setup):
        return tests  # a spec too large is reported when it is built
    bound = set(dir(builtins))
    read: set[str] = set()
    try:
        trees = [(False, parse(setup)), *((True, parse(test)) for test in tests)]
    except SyntaxError:
        return tests  # reported, with its line, when the spec is built
    for is_test, tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
                if is_test:
                    read.add(node.id)
            elif isinstance(node, ast.Name):
                bound.add(node.id)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
            elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
    if read - bound:
        return tests
    raise SpecError(
        "the tests use no name the code could define (only builtins and names the tests or"
        " setup bind), so they would pass for any code; call the function you need by name,"
        " e.g. assert chunk([1, 2, 3], 2) == [[1, 2], [3]]"
    )
