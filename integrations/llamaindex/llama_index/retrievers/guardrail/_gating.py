"""LlamaIndex's side of the gate: nodes in, gated nodes out.

No verification logic lives here. `GateSettings.plan` turns retrieved nodes into the core's
`Candidate` objects and picks their specs with `guardrail.integration.plan_gate`; the caller hands
``plan.candidates`` and ``plan.specs`` to `Gate.gate` or `Gate.agate` (the only difference between
the sync and async paths), and `gated_nodes` turns the answer back into copies of the nodes
carrying their verdict under ``metadata["guardrail"]`` (and the gate's question, when it asked,
under ``metadata["guardrail_question"]``).

What an LLM reads of a gated node (``get_content(MetadataMode.LLM)``, as response synthesis
does) is its code under two lines of metadata, always these and in this order (`LLM_KEYS`):
``guardrail_verdict`` (status and what it was judged against, `guardrail.verdict_text.describe`)
and ``guardrail_code`` (its name, file and lines, ``chunked (pkg/more.py:10-30)``,
`guardrail.verdict_text.location`), each one cleaned, capped line: about 120 bytes beside the
code, where the six keys shown before took about 175 and the whole metadata dict 1-2.5 KB. Every
other key stays in the metadata for programs but out of the LLM's view
(``excluded_llm_metadata_keys``), and the node's
templates are the node class's own: a retrieved node can neither plant a verdict line of its own
(keys the gate owns are dropped, `guardrail.integration.gate_owned`), nor hide the gate's, nor
reword what the LLM reads around it. The verdict stays out of what is embedded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, TextNode
from pydantic import BaseModel, ConfigDict, Field, field_validator

from guardrail.gate import Candidate, Gate, GateResult, Policy
from guardrail.gatelike import GateLike
from guardrail.integration import (
    METADATA_KEY,
    GatePlan,
    Tests,
    check_tests,
    gate_owned,
    plan_gate,
    public_metadata,
    question_metadata,
    report_dropped,
    verdict_from_metadata,
)
from guardrail.spec import Spec
from guardrail.verdict import Verdict
from guardrail.verdict_text import describe, location

__all__ = [
    "LLM_KEYS",
    "LOCATION_KEY",
    "VERDICT_TEXT_KEY",
    "GateSettings",
    "TestProvider",
    "candidate_node",
    "gated_nodes",
    "verdict_of",
]

VERDICT_TEXT_KEY = "guardrail_verdict"
"""Metadata key of the one-line verdict an LLM reads above each node's code."""

LOCATION_KEY = "guardrail_code"
"""Metadata key of the line naming the code an LLM reads: ``name (file:start-end)``."""

LLM_KEYS = (VERDICT_TEXT_KEY, LOCATION_KEY)
"""The metadata an LLM reads above a gated node's code, in this order; nothing else is shown:
the verdict dict (its line is `VERDICT_TEXT_KEY`), the question's dict
(`GuardedRetriever.last_question` renders it), the index's hashes and stored tests, and what the
code itself shows (docstring, signature) only add noise, and a retrieved node's own keys could
say anything. Both keys are the gate's (`guardrail.integration.gate_owned`): a node that brings
its own is stripped of them."""

_TEMPLATES = ("text_template", "metadata_template", "metadata_separator")

TestProvider: TypeAlias = Callable[[str, BaseNode], Sequence[str] | Spec | None]
"""``(query, node) -> tests``: tests for one retrieved node, or ``None`` to fall back to the
tests stored in its metadata. ``query`` is ``""`` when a postprocessor runs without a query."""


def verdict_of(node: BaseNode | NodeWithScore) -> Verdict | None:
    """The `Verdict` the gated retriever or postprocessor attached to ``node`` (``None`` if none).

    Raises:
        pydantic.ValidationError: the metadata under ``"guardrail"`` is not a verdict.
    """
    return verdict_from_metadata((node.node if isinstance(node, NodeWithScore) else node).metadata)


class GateSettings(BaseModel):
    """Configuration shared by `GuardedRetriever` and `ExecutionGatePostprocessor`.

    Tests for a candidate come from, in order: the query (a `TestedQueryBundle`), the ``tests``
    field, the ``test_provider``, the tests stored in the node's metadata (its own tests or its
    docstring's examples, see `guardrail.sources`). A candidate with none is ``unverifiable`` and
    the policy decides whether it is returned.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    gate: GateLike = Field(default_factory=Gate, exclude=True)
    """The core `Gate` that runs candidates in the sandbox (default ``Gate()``, Docker), or a
    `guardrail.client.RemoteGate` (a ``guardrail serve`` shared by many agents)."""
    policy: Policy | None = None
    """``rerank``, ``filter``, ``abstain`` or ``agree`` (`guardrail.Policy`); ``None`` uses the
    gate's own policy."""
    tests: Tests | None = None
    """Tests every candidate must pass (test statements, or a `Spec`)."""
    test_provider: TestProvider | None = Field(default=None, exclude=True)
    """Callable ``(query, node) -> tests | Spec | None`` for per-node tests."""
    entry_point: str | None = None
    """The function name the tests call; inferred from the tests when ``None``."""
    setup: str = ""
    """Code run in the judge before each test (imports, helpers)."""
    include_paths: bool = False
    """Keep absolute host paths (``root``, an absolute ``file``) in the nodes handed over; by
    default ``root`` is left out and ``file`` is relative to it."""

    @field_validator("tests", mode="before")
    @classmethod
    def _tests_are_a_list(cls, value: object) -> object:
        return check_tests(value)

    def plan(
        self, query: str, nodes: Sequence[NodeWithScore], tests: Tests | None = None
    ) -> GatePlan[NodeWithScore]:
        """Nodes, candidates and their specs, in retrieval order (see `plan_gate`); ``tests``
        override the ``tests`` field.

        Raises:
            guardrail.errors.SpecError: tests that do not parse (before anything runs).
        """
        provider = self.test_provider
        return plan_gate(
            nodes,
            [_candidate(node) for node in nodes],
            self.tests if tests is None else tests,
            provider=None if provider is None else lambda node: provider(query, node.node),
            setup=self.setup,
            entry_point=self.entry_point,
        )


def gated_nodes(
    plan: GatePlan[NodeWithScore],
    result: GateResult,
    limit: int | None = None,
    *,
    include_paths: bool = False,
) -> list[NodeWithScore]:
    """The nodes the policy kept, in its order, at most ``limit``, each with its verdict.

    Each node's score follows the gate's order (1.0 for the first, falling evenly), so a later
    LlamaIndex step that sorts by score (fusion, a reranker's cut-off) keeps verified code first;
    the retriever's own similarity stays in the verdict as ``retrieval_score``. Host paths are
    left out of the metadata unless ``include_paths`` (`guardrail.integration.public_metadata`).
    The nodes it dropped for failing (or withheld under ``agree``) go, with their verdicts and
    the question, to an open
    `guardrail.integration.collecting_dropped` (the query engine explains an empty answer with
    them), never into the list returned.
    """
    kept = plan.kept(result, limit)
    question = question_metadata(result)
    report_dropped(
        _with_verdict(node, metadata, question, score=0.0, include_paths=include_paths)
        for node, metadata in plan.dropped(result)
    )
    return [
        _with_verdict(
            node,
            metadata,
            question,
            score=1.0 - position / len(kept),
            include_paths=include_paths,
        )
        for position, (node, metadata) in enumerate(kept)
    ]


def candidate_node(candidate: Candidate) -> NodeWithScore:
    """A node for a `CodeIndex` hit: the code as text, the snippet's metadata, its score."""
    node = TextNode(text=candidate.code, metadata=dict(candidate.metadata))
    if candidate.id:
        node.id_ = candidate.id
    return NodeWithScore(node=node, score=candidate.score)


def _candidate(node: NodeWithScore) -> Candidate:
    return Candidate(
        code=node.node.get_content(metadata_mode=MetadataMode.NONE),
        id=node.node.node_id,
        score=node.score,
        metadata=dict(node.node.metadata),
    )


def _with_verdict(
    node: NodeWithScore,
    verdict: dict[str, Any],
    question: dict[str, Any],
    *,
    score: float,
    include_paths: bool,
) -> NodeWithScore:
    # A copy: nodes the caller (or a docstore) handed in are never modified. The verdict dict is
    # for programs reading the metadata; the LLM reads its line, and neither is embedded.
    inner = node.node
    shown = public_metadata(inner.metadata, include_paths=include_paths)
    # LlamaIndex writes metadata in its order above the code: the verdict's line first, then
    # the code's name and place, each one clean line; the rest for programs only.
    read = {VERDICT_TEXT_KEY: describe(verdict, shown)}
    where = location(shown)
    if where:
        read[LOCATION_KEY] = where
    rest = {key: value for key, value in shown.items() if key not in read}
    metadata = {**read, **rest, METADATA_KEY: verdict, **question}
    fields = type(inner).model_fields
    templates = {name: fields[name].default for name in _TEMPLATES if name in fields}
    copy = inner.model_copy(
        update={
            "metadata": metadata,
            "excluded_embed_metadata_keys": [
                *(k for k in inner.excluded_embed_metadata_keys if not gate_owned(k)),
                METADATA_KEY,
                *LLM_KEYS,
                *question,
            ],
            "excluded_llm_metadata_keys": [key for key in metadata if key not in read],
            **templates,
        }
    )
    return NodeWithScore(node=copy, score=score)
