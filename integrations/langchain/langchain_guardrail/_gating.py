"""LangChain's side of the gate: Documents in, gated Documents out.

No verification logic lives here. `GateSettings.plan` turns retrieved Documents into the core's
`Candidate` objects and picks their specs with `guardrail.integration.plan_gate`; the caller hands
``plan.candidates`` and ``plan.specs`` to `Gate.gate` or `Gate.agate` (the only difference between
the sync and async paths), and `gated_documents` turns the answer back into copies of the
Documents carrying their verdict under ``metadata["guardrail"]``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, Literal, TypeAlias

from langchain_core.documents import Document
from pydantic import BaseModel, ConfigDict, field_validator

from guardrail.gate import Candidate, GateResult, Policy
from guardrail.gatelike import GateLike
from guardrail.integration import (
    METADATA_KEY,
    GatePlan,
    Tests,
    check_tests,
    plan_gate,
    public_metadata,
    question_metadata,
    report_dropped,
    verdict_from_metadata,
)
from guardrail.spec import Spec
from guardrail.verdict import Verdict

__all__ = [
    "GateSettings",
    "PolicyName",
    "TestProvider",
    "gated_documents",
    "verdict_of",
]

PolicyName: TypeAlias = Literal["rerank", "filter", "abstain", "agree"]

TestProvider: TypeAlias = Callable[[str, Document], Sequence[str] | Spec | None]
"""``(query, document) -> tests``: tests for one retrieved document, or ``None`` to fall back to
the tests stored in its metadata."""


def verdict_of(document: Document) -> Verdict | None:
    """The `Verdict` a gated retriever or compressor attached to ``document`` (``None`` if none).

    Raises:
        pydantic.ValidationError: the metadata under ``"guardrail"`` is not a verdict.
    """
    return verdict_from_metadata(document.metadata)


class GateSettings(BaseModel):
    """Configuration shared by `GuardedRetriever` and `ExecutionGateCompressor`.

    Tests for a candidate come from, in order: the tests given with the call (retriever only),
    the ``tests`` field, the ``test_provider``, the tests stored in the document's metadata
    (``tests``: a list or its JSON text; doctest examples that ``guardrail index`` stored). A
    candidate with none is ``unverifiable`` and the policy decides whether it is returned.
    Passing ``tests=[]`` with a call turns the field's tests off for that call.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    gate: GateLike
    """The core `Gate` that runs candidates in the sandbox, or a `guardrail.client.RemoteGate`
    (a ``guardrail serve`` shared by many agents)."""
    policy: Policy | PolicyName | None = None
    """``rerank``, ``filter``, ``abstain`` or ``agree`` (stored as a `Policy`); ``None``: the
    gate's own."""
    tests: Tests | None = None
    """Tests every candidate must pass (test statements, or a `Spec`)."""
    test_provider: TestProvider | None = None
    """Callable ``(query, document) -> tests | Spec | None`` for per-document tests."""
    entry_point: str | None = None
    """The function name the tests call; inferred from the tests when ``None``."""
    setup: str = ""
    """Code run in the judge before each test (imports, helpers)."""
    include_paths: bool = False
    """Keep absolute host paths (``root``, an absolute ``file``) in the Documents handed over;
    by default ``root`` is left out and ``file`` is relative to it."""

    @field_validator("policy", mode="after")
    @classmethod
    def _policy_enum(cls, value: Policy | PolicyName | None) -> Policy | None:
        return None if value is None else Policy(value)

    @field_validator("tests", mode="before")
    @classmethod
    def _tests_are_a_list(cls, value: object) -> object:
        try:
            return check_tests(value)
        except TypeError as exc:  # pydantic reports ValueErrors as a ValidationError
            raise ValueError(str(exc)) from None

    def plan(
        self,
        query: str,
        retrieved: Sequence[Document] | Sequence[Candidate],
        tests: Tests | None = None,
    ) -> GatePlan[Document]:
        """Documents, candidates and their specs, in retrieval order (see `plan_gate`).

        ``retrieved`` are LangChain Documents (page content = code) or `CodeIndex` hits;
        ``tests`` override the ``tests`` field.

        Raises:
            guardrail.errors.SpecError: tests that do not parse (before anything runs).
        """
        pairs = [_pair(item) for item in retrieved]
        provider = self.test_provider
        return plan_gate(
            [document for _, document in pairs],
            [candidate for candidate, _ in pairs],
            self.tests if tests is None else tests,
            provider=None if provider is None else lambda document: provider(query, document),
            setup=self.setup,
            entry_point=self.entry_point,
        )


def gated_documents(
    plan: GatePlan[Document],
    result: GateResult,
    limit: int | None = None,
    *,
    include_paths: bool = False,
) -> list[Document]:
    """The Documents the policy kept, in its order, at most ``limit``, each with its verdict
    and the gate's question (``metadata["guardrail_question"]``, when it asked); host paths left
    out of their metadata unless ``include_paths`` (`public_metadata`).

    The Documents it dropped for failing (or withheld under ``agree``: verified, but they
    disagree), with the question, go to an open `guardrail.integration.collecting_dropped`
    (the tool explains an empty answer with them), never into the list returned.
    """
    question = question_metadata(result)
    report_dropped(
        _with_verdict(document, metadata, question, include_paths)
        for document, metadata in plan.dropped(result)
    )
    return [
        _with_verdict(document, metadata, question, include_paths)
        for document, metadata in plan.kept(result, limit)
    ]


def _with_verdict(
    document: Document, verdict: dict[str, Any], question: dict[str, Any], include_paths: bool
) -> Document:
    # A copy: documents the caller handed in are never modified.
    shown = public_metadata(document.metadata, include_paths=include_paths)
    return document.model_copy(update={"metadata": {**shown, METADATA_KEY: verdict, **question}})


def _pair(item: Document | Candidate) -> tuple[Candidate, Document]:
    if isinstance(item, Candidate):
        # A `CodeIndex` hit: the code as content, the snippet's metadata (file, lines, tests).
        document = Document(
            page_content=item.code, metadata=dict(item.metadata), id=item.id or None
        )
        return item, document
    if not isinstance(item, Document):
        raise TypeError(
            f"the base retriever returned {type(item).__name__} {item!r:.60}; "
            "expected LangChain Documents whose page_content is code"
        )
    candidate = Candidate(code=item.page_content, id=item.id or "", metadata=dict(item.metadata))
    return candidate, item
