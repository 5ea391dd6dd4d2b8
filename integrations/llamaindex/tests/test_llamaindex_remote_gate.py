"""The LlamaIndex integration over `RemoteGate` (a real ``guardrail serve`` on loopback): the
query engine, its async path and the postprocessor take it exactly as they take a `Gate`.

The LLM is LlamaIndex's echoing `MockLLM`, so the response shows what the LLM was given.
"""

from __future__ import annotations

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llamaindex_pool import CLAMP_CLONES, CLAMP_QUERY, CLAMP_TESTS, CORRECT_ID

from guardrail.client import RemoteGate
from llama_index.retrievers.guardrail import (
    METADATA_KEY,
    ExecutionGatePostprocessor,
    GuardedRetriever,
    TestedQueryBundle,
)

pytestmark = pytest.mark.docker


def _shown_clones(prompt: str) -> list[str]:
    return [name for name, code in CLAMP_CLONES.items() if code.strip() in prompt]


async def test_a_query_engine_over_the_shared_service_shows_only_verified_code(
    clamp_index: VectorStoreIndex, remote_gate: RemoteGate, mock_llm: MockLLM
) -> None:
    retriever = GuardedRetriever(clamp_index.as_retriever(similarity_top_k=6), gate=remote_gate,
                                 k=3)  # fmt: skip
    engine = RetrieverQueryEngine.from_args(retriever)
    response = engine.query(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS))
    assert [node.node.node_id for node in response.source_nodes] == [CORRECT_ID]
    assert response.source_nodes[0].node.metadata[METADATA_KEY]["status"] == "verified"
    assert _shown_clones(str(response)) == []
    again = await engine.aquery(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS))
    assert [node.node.node_id for node in again.source_nodes] == [CORRECT_ID]


def test_the_postprocessor_gates_through_the_shared_service(
    clamp_index: VectorStoreIndex, remote_gate: RemoteGate, mock_llm: MockLLM
) -> None:
    engine = RetrieverQueryEngine.from_args(
        clamp_index.as_retriever(similarity_top_k=6),
        node_postprocessors=[ExecutionGatePostprocessor(gate=remote_gate, top_n=2)],
    )
    response = engine.query(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS))
    assert [node.node.node_id for node in response.source_nodes] == [CORRECT_ID]
    assert _shown_clones(str(response)) == []
