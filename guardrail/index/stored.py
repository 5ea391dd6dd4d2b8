"""Judge every snippet of an index against the tests stored with it (its doctests, mostly).

A user's first question about an index: which of my functions pass their own tests in the
sandbox? `verify_stored` answers it with the `Gate` (batched, cached); it adds no verification
logic. Specs come from `guardrail.sources.resolve` with no query tests, exactly as ``search``
without ``--tests`` resolves them, so a snippet is judged here as it would be judged when
retrieved, in its own module (its metadata's context, `guardrail.context`). Snippets without stored
tests get the Gate's ``unverifiable`` / ``no_tests`` verdict.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict

from guardrail.gate import Candidate, Gate
from guardrail.index.code_index import CodeIndex
from guardrail.index.snippet import Snippet, decode_metadata
from guardrail.sources import SpecSource, resolve
from guardrail.verdict import Status, Verdict

__all__ = [
    "FAILING_STATUSES",
    "StoredCheck",
    "snippet_candidate",
    "stored_summary",
    "verify_stored",
]

FAILING_STATUSES = frozenset({Status.FAILED, Status.ERROR, Status.TIMEOUT})
"""Statuses that mean a snippet ran against its stored tests and did not pass them."""

DEFAULT_CHUNK = 64  # snippets per Gate call: bounds memory and gives progress on big indexes


class StoredCheck(BaseModel):
    """One snippet and its verdict against the tests stored with it.

    Attributes:
        snippet: the stored snippet (code, file, line range, its stored tests).
        source: where its tests came from: ``doctest`` (its docstring's examples), ``stored``
            (tests written into the index another way), or ``none``.
        verdict: the Gate's verdict.
    """

    model_config = ConfigDict(frozen=True)

    snippet: Snippet
    source: SpecSource
    verdict: Verdict

    @property
    def failing(self) -> bool:
        """It ran against its stored tests and did not pass (see `FAILING_STATUSES`)."""
        return self.verdict.status in FAILING_STATUSES


def verify_stored(
    index: CodeIndex,
    gate: Gate,
    *,
    where: Mapping[str, Any] | None = None,
    chunk: int = DEFAULT_CHUNK,
    on_progress: Callable[[int, int], None] | None = None,
) -> list[StoredCheck]:
    """Judge every snippet of ``index`` (or those matching ``where``) against its stored tests.

    Results follow `CodeIndex.snippets` order (file, then line). ``on_progress(done, total)`` is
    called after each chunk of ``chunk`` snippets.

    Raises:
        SpecError: a snippet's stored tests cannot be used (a collection written by hand).
        SandboxError: the sandbox cannot judge anything.
    """
    if chunk < 1:
        raise ValueError(f"chunk must be at least 1, got {chunk}")
    total = index.count() if where is None else None
    checks: list[StoredCheck] = []
    for snippets in _chunks(index.snippets(where=where), chunk):
        candidates = [snippet_candidate(snippet) for snippet in snippets]
        resolved = [resolve(candidate) for candidate in candidates]
        verdicts = gate.verify(
            [c.code for c in candidates],
            [r.spec for r in resolved],
            metadata=[c.metadata for c in candidates],  # each judged in its module
        )
        checks.extend(
            StoredCheck(snippet=snippet, source=spec.source, verdict=verdict)
            for snippet, spec, verdict in zip(snippets, resolved, verdicts, strict=True)
        )
        if on_progress is not None:
            on_progress(len(checks), total or len(checks))
    return checks


def stored_summary(checks: Iterable[StoredCheck]) -> dict[str, int]:
    """Counts per ``status/reason`` (``verified/passed``, ``unverifiable/no_tests``), sorted."""
    counts = Counter(f"{c.verdict.status.value}/{c.verdict.reason.value}" for c in checks)
    return dict(sorted(counts.items()))


def snippet_candidate(snippet: Snippet) -> Candidate:
    """The snippet as the Gate sees it: its code, its index id, its decoded metadata (with the
    module context, so it is judged where it lives)."""
    metadata = decode_metadata(snippet.to_metadata())
    return Candidate(code=snippet.code, id=snippet.index_id, metadata=metadata)


def _chunks(snippets: Iterator[Snippet], size: int) -> Iterator[list[Snippet]]:
    chunk: list[Snippet] = []
    for snippet in snippets:
        chunk.append(snippet)
        if len(chunk) == size:
            yield chunk
            chunk = []
    if chunk:
        yield chunk
