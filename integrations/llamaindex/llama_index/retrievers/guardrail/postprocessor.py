"""`ExecutionGatePostprocessor`: the execution gate as a LlamaIndex node postprocessor.

For pipelines that keep their retriever and add the gate after it::

    engine = RetrieverQueryEngine.from_args(
        retriever, node_postprocessors=[ExecutionGatePostprocessor(gate=Gate(), top_n=3)]
    )

Tests come from the query (a `TestedQueryBundle` passed to ``engine.query``), the ``tests`` field,
the ``test_provider``, or the tests stored in each node's metadata.
"""

from __future__ import annotations

from llama_index.core.bridge.pydantic import ConfigDict, Field
from llama_index.core.postprocessor.types import BaseNodePostprocessor
from llama_index.core.schema import NodeWithScore, QueryBundle

from guardrail.integration import GatePlan
from llama_index.retrievers.guardrail._gating import GateSettings, gated_nodes
from llama_index.retrievers.guardrail.base import TestedQueryBundle

__all__ = ["ExecutionGatePostprocessor"]


class ExecutionGatePostprocessor(GateSettings, BaseNodePostprocessor):
    """Verify the nodes in the sandbox; verified first, failed dropped (see `Policy`).

    Fields: ``gate``, ``policy``, ``tests``, ``test_provider``, ``entry_point``, ``setup``,
    ``include_paths`` (as for `GuardedRetriever`) and ``top_n``, the most nodes returned
    (``None``: all the policy keeps). Unknown fields raise a ``ValidationError`` (LlamaIndex
    would ignore them).
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    top_n: int | None = Field(default=None, ge=1)
    """At most this many nodes are returned; ``None`` returns everything the policy keeps."""

    @classmethod
    def class_name(cls) -> str:
        return "ExecutionGatePostprocessor"

    def _postprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        plan = self._plan(nodes, query_bundle)
        result = self.gate.gate(plan.candidates, plan.specs, policy=self.policy)
        return gated_nodes(plan, result, self.top_n, include_paths=self.include_paths)

    async def _apostprocess_nodes(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None = None
    ) -> list[NodeWithScore]:
        plan = self._plan(nodes, query_bundle)
        result = await self.gate.agate(plan.candidates, plan.specs, policy=self.policy)
        return gated_nodes(plan, result, self.top_n, include_paths=self.include_paths)

    def _plan(
        self, nodes: list[NodeWithScore], query_bundle: QueryBundle | None
    ) -> GatePlan[NodeWithScore]:
        tests = query_bundle.tests if isinstance(query_bundle, TestedQueryBundle) else None
        query = "" if query_bundle is None else query_bundle.query_str
        return self.plan(query, nodes, tests)
