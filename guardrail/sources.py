"""Where a candidate's tests come from: the verification sources of DESIGN.md, strongest first.

1. tests given with the query (an agent that wrote its tests first);
2. tests stored with the snippet in the index: its own unit tests, or the doctest examples of its
   docstring that `guardrail index` turned into tests (``tests_source == "doctest"`` in metadata);
3. none: the candidate is unverifiable and the gate's policy decides what to do with it.

Only one source is used per candidate: query tests, when given, decide for every candidate, so
that all candidates of one query are judged by the same standard. A candidate defining the
function under another name than the tests call is bound under that name only when it is safe
(`guardrail.binding`; the alias is recorded and ranks below an exact name).

The CLI, the LangChain and the LlamaIndex integrations all resolve specs here.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from guardrail.errors import SpecError
from guardrail.gate import Candidate
from guardrail.spec import Spec

__all__ = ["ResolvedSpec", "SpecSource", "resolve", "resolve_spec"]


class SpecSource(StrEnum):
    """Which source a candidate's spec came from."""

    QUERY = "query"
    PROVIDER = "provider"  # per-candidate tests from an integration's test_provider callable
    STORED = "stored"
    DOCTEST = "doctest"
    NONE = "none"


@dataclass(frozen=True, slots=True)
class ResolvedSpec:
    """A candidate's spec (``None``: unverifiable) and where it came from."""

    spec: Spec | None
    source: SpecSource


def resolve(
    candidate: Candidate,
    query_tests: Sequence[str] | Spec | None = None,
    *,
    setup: str = "",
    entry_point: str | None = None,
) -> ResolvedSpec:
    """The spec to verify ``candidate`` against, and its source (see the module docstring).

    Args:
        candidate: a retrieved candidate; its ``metadata`` may hold ``tests`` (a list of strings,
            or the JSON text of one, as Chroma stores it), ``setup`` and ``entry_point``.
        query_tests: tests given with the query, as statements or a ready `Spec`.
        setup: setup code for ``query_tests`` given as statements.
        entry_point: the function ``query_tests`` call; inferred from them when not given (and
            taken from the candidate's metadata when they do not tell).

    Raises:
        SpecError: the query tests, or the tests stored with the candidate, cannot be used.
    """
    if isinstance(query_tests, Spec):
        return ResolvedSpec(query_tests, SpecSource.QUERY)
    tests = [query_tests] if isinstance(query_tests, str) else list(query_tests or [])
    metadata = candidate.metadata
    if tests:
        fallback = entry_point or _text(metadata, "entry_point")
        return ResolvedSpec(_build(tests, entry_point, setup, fallback), SpecSource.QUERY)
    stored = _stored_tests(candidate)
    if not stored:
        return ResolvedSpec(None, SpecSource.NONE)
    where = f"candidate {candidate.id!r}" if candidate.id else "candidate"
    try:
        spec = _build(stored, _text(metadata, "entry_point"), _text(metadata, "setup") or "", None)
    except SpecError as exc:
        raise SpecError(f"{where}: stored tests: {exc}") from None
    doctest = metadata.get("tests_source") == SpecSource.DOCTEST.value
    return ResolvedSpec(spec, SpecSource.DOCTEST if doctest else SpecSource.STORED)


def resolve_spec(
    candidate: Candidate,
    query_tests: Sequence[str] | Spec | None = None,
    *,
    setup: str = "",
    entry_point: str | None = None,
) -> Spec | None:
    """The spec of `resolve`, without its source; ``None`` means unverifiable."""
    return resolve(candidate, query_tests, setup=setup, entry_point=entry_point).spec


def _build(tests: list[str], entry_point: str | None, setup: str, fallback: str | None) -> Spec:
    if entry_point is None:
        try:
            return Spec.from_tests(tests, setup=setup)
        except SpecError:
            if fallback is None:
                raise
            entry_point = fallback
    return Spec.build(tests, entry_point, setup)


def _stored_tests(candidate: Candidate) -> list[str]:
    value = candidate.metadata.get("tests")
    if isinstance(value, str) and value.strip():
        # Raw Chroma metadata (read without CodeIndex, e.g. through langchain-chroma): JSON text.
        with contextlib.suppress(json.JSONDecodeError):  # reported below as not a list
            value = json.loads(value)
    if value is None or value == "":
        return []
    if not isinstance(value, list) or not all(isinstance(test, str) for test in value):
        where = f"candidate {candidate.id!r}" if candidate.id else "candidate"
        raise SpecError(
            f"{where}: metadata 'tests' must be a list of test strings, got {value!r:.200}"
        )
    return value


def _text(metadata: Mapping[str, Any], key: str) -> str | None:
    value = metadata.get(key)
    return value if isinstance(value, str) and value else None
