"""LlamaIndex's side of the gate: nodes in, gated nodes out.

No verification logic lives here. `GateSettings.plan` turns retrieved nodes into the core's
`Candidate` objects and picks their specs with `guardrail.integration.plan_gate`; the caller hands
``plan.candidates`` and ``plan.specs`` to `Gate.gate` or `Gate.agate` (the only difference between
the sync and async paths), and `gated_nodes` turns the answer back into copies of the nodes
carrying their verdict under ``metadata["guardrail"]`` (and the gate's question, when it asked,
under ``metadata["guardrail_question"]``).

What an LLM reads of a gated node (``get_content(MetadataMode.LLM)``, as response synthesis
does) is its code under a few lines of metadata: ``guardrail_verdict`` (status and what it was
judged against, `guardrail.verdict_text.describe`), its name, module, file and lines. The verdict
dict, hashes, stored tests, setup and the docstring (already in the code) are left out through
``excluded_llm_metadata_keys``; the verdict stays out of what is embedded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeAlias

from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, TextNode
from pydantic import BaseModel, ConfigDict, Field, field_validator

from guardrail.gate import Candidate, Gate, GateResult, Policy
from guardrail.integration import (
    METADATA_KEY,
    PATH_KEYS,
    QUESTION_KEY,
    GatePlan,
    Tests,
    check_tests,
    plan_gate,
    public_metadata,
    question_metadata,
    verdict_from_metadata,
)
from guardrail.spec import Spec
from guardrail.verdict import Verdict
from guardrail.verdict_text import describe

__all__ = [
    "LLM_NOISE_KEYS",
    "VERDICT_TEXT_KEY",
    "GateSettings",
    "TestProvider",
    "candidate_node",
    "gated_nodes",
    "verdict_of",
]

VERDICT_TEXT_KEY = "guardrail_verdict"
"""Metadata key of the one-line verdict an LLM reads above each node's code."""

LLM_NOISE_KEYS = (
    METADATA_KEY,
    QUESTION_KEY,
    "content_sha256",
    "tests",
    "tests_source",
    "setup",
    "docstring",
    "signature",
    "entry_point",
    *PATH_KEYS,
)
"""Metadata an LLM gains nothing from: the verdict dict (its line is `VERDICT_TEXT_KEY`), the
question's dict (`GuardedRetriever.last_question` renders it), the index's hashes and stored
tests, and what the code itself shows (docstring, signature, name)."""

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

    gate: Gate = Field(default_factory=Gate, exclude=True)
    """The core `Gate` that runs candidates in the sandbox; default ``Gate()`` (Docker)."""
    policy: Policy | None = None
    """``rerank``, ``filter`` or ``abstain``; ``None`` uses the gate's own policy."""
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
    """
    kept = plan.kept(result, limit)
    question = question_metadata(result)
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
    # The verdict's line first: LlamaIndex writes metadata in its order above the code.
    metadata = {
        VERDICT_TEXT_KEY: describe(verdict, shown),
        **shown,
        METADATA_KEY: verdict,
        **question,
    }
    noise = [key for key in LLM_NOISE_KEYS if key in metadata]
    copy = inner.model_copy(
        update={
            "metadata": metadata,
            "excluded_embed_metadata_keys": _plus(
                inner.excluded_embed_metadata_keys, [METADATA_KEY, VERDICT_TEXT_KEY, QUESTION_KEY]
            ),
            "excluded_llm_metadata_keys": _plus(inner.excluded_llm_metadata_keys, noise),
        }
    )
    return NodeWithScore(node=copy, score=score)


def _plus(keys: list[str], more: list[str]) -> list[str]:
    return [*keys, *(key for key in more if key not in keys)]
