"""Framework-neutral plumbing for the LangChain and LlamaIndex integrations.

No verification logic lives in an integration: each one turns its framework's objects (Documents,
nodes) into `Candidate` objects, asks `plan_gate` for their specs, hands ``plan.candidates`` and
``plan.specs`` to `Gate.gate` or `Gate.agate` (the only difference between a sync and an async
path), and attaches the metadata of `GatePlan.kept` to copies of its objects under `METADATA_KEY`.
Both integrations therefore choose specs by the same rules and write the same verdict shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeAlias, TypeVar

from guardrail.gate import Candidate, GatedCandidate, GateResult, Policy
from guardrail.sources import SpecSource, resolve
from guardrail.spec import Spec
from guardrail.verdict import Verdict

__all__ = [
    "METADATA_KEY",
    "GatePlan",
    "Tests",
    "check_tests",
    "plan_gate",
    "verdict_from_metadata",
    "verdict_metadata",
]

METADATA_KEY = "guardrail"
"""The one metadata key a verdict is stored under, in Documents and nodes alike."""

Tests: TypeAlias = Sequence[str] | Spec
"""Test statements (``["assert add(1, 2) == 3", ...]``) or a ready `Spec` (with setup)."""

Item = TypeVar("Item")


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
    ``retrieval_rank`` (0-based place in the base retriever's results), ``retrieval_score`` (its
    score, ``None`` when it gave none) and ``policy``. Plain strings, numbers and lists only, so
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
        "retrieval_rank": gated.retrieval_rank,
        "retrieval_score": gated.candidate.score,
        "policy": policy.value,
    }


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
        return [
            (
                self.items[gated.retrieval_rank],
                verdict_metadata(
                    gated, spec_source=self.sources[gated.retrieval_rank], policy=result.policy
                ),
            )
            for gated in kept
        ]


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
        guardrail.errors.SpecError: tests that do not parse (before anything runs).
        TypeError: query tests or a provider's answer that are not tests (see `check_tests`).
        ValueError: ``items`` and ``candidates`` of different lengths.
    """
    query_tests = check_tests(query_tests)
    specs: list[Spec | None] = []
    sources: list[SpecSource] = []
    for item, candidate in zip(items, candidates, strict=True):
        provided = check_tests(provider(item)) if provider and not query_tests else None
        resolved = resolve(
            candidate, provided or query_tests or None, setup=setup, entry_point=entry_point
        )
        specs.append(resolved.spec)
        # Provider tests are never empty here, so `resolve` took them as query tests.
        sources.append(SpecSource.PROVIDER if provided else resolved.source)
    return GatePlan(tuple(items), tuple(candidates), tuple(specs), tuple(sources))
