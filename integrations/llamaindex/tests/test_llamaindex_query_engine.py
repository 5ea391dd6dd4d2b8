"""The gate inside LlamaIndex's `RetrieverQueryEngine`, as a retriever and as a postprocessor.

The LLM is LlamaIndex's `MockLLM`, which echoes its prompt: the response text is exactly what an
LLM would have been shown, so the tests can check which code reached it.
"""

from __future__ import annotations

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llamaindex_pool import CLAMP_CLONES, CLAMP_QUERY, CLAMP_TESTS, CORRECT_ID

from guardrail.gate import Gate, Policy
from llama_index.retrievers.guardrail import (
    METADATA_KEY,
    VERDICT_TEXT_KEY,
    ExecutionGatePostprocessor,
    GuardedRetriever,
    TestedQueryBundle,
)

pytestmark = pytest.mark.docker


def _shown_clones(prompt: str) -> list[str]:
    return [name for name, code in CLAMP_CLONES.items() if code.strip() in prompt]


def test_query_engine_over_the_guarded_retriever_shows_the_llm_only_verified_code(
    clamp_index: VectorStoreIndex, gate: Gate, mock_llm: MockLLM
) -> None:
    base = clamp_index.as_retriever(similarity_top_k=6)
    ungated = RetrieverQueryEngine.from_args(base).query(CLAMP_QUERY)
    assert _shown_clones(str(ungated)), "precondition: the ungated engine shows buggy clones"

    engine = RetrieverQueryEngine.from_args(GuardedRetriever(base, gate=gate, k=3))
    response = engine.query(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS))

    assert [node.node.node_id for node in response.source_nodes] == [CORRECT_ID]
    assert response.source_nodes[0].node.metadata[METADATA_KEY]["status"] == "verified"
    prompt = str(response)
    assert "def clamp(value, low, high)" in prompt
    assert _shown_clones(prompt) == []
    # The LLM reads the verdict's line, not the verdict dict.
    assert f"{VERDICT_TEXT_KEY}: VERIFIED against the query's tests: passed 5/5" in prompt
    assert f"{METADATA_KEY}:" not in prompt and "passed_tests" not in prompt


async def test_async_query_engine_over_the_guarded_retriever(
    clamp_index: VectorStoreIndex, gate: Gate, mock_llm: MockLLM
) -> None:
    retriever = GuardedRetriever(clamp_index.as_retriever(similarity_top_k=6), gate=gate, k=3)
    engine = RetrieverQueryEngine.from_args(retriever)
    response = await engine.aquery(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS))
    assert [node.node.node_id for node in response.source_nodes] == [CORRECT_ID]


def test_postprocessor_in_a_query_engine_gates_the_plain_retriever(
    clamp_index: VectorStoreIndex, gate: Gate, mock_llm: MockLLM
) -> None:
    engine = RetrieverQueryEngine.from_args(
        clamp_index.as_retriever(similarity_top_k=6),
        node_postprocessors=[ExecutionGatePostprocessor(gate=gate, top_n=2)],
    )
    response = engine.query(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS))
    assert [node.node.node_id for node in response.source_nodes] == [CORRECT_ID]
    assert response.source_nodes[0].node.metadata[METADATA_KEY]["spec_source"] == "query"
    assert _shown_clones(str(response)) == []


async def test_postprocessor_async_path_and_its_own_tests(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    nodes = clamp_index.as_retriever(similarity_top_k=6).retrieve(CLAMP_QUERY)
    processor = ExecutionGatePostprocessor(gate=gate, tests=CLAMP_TESTS, policy=Policy.FILTER)

    sync = processor.postprocess_nodes(nodes, query_str=CLAMP_QUERY)
    without_query = processor.postprocess_nodes(nodes)
    asynchronous = await processor.apostprocess_nodes(nodes, query_str=CLAMP_QUERY)

    for result in (sync, without_query, asynchronous):
        assert [node.node.node_id for node in result] == [CORRECT_ID]
        assert result[0].node.metadata[METADATA_KEY]["policy"] == "filter"
    # The last two were judged from the verdict cache, not run again.
    assert asynchronous[0].node.metadata[METADATA_KEY]["cached"] is True
    # The nodes handed in are left as they were.
    assert all(METADATA_KEY not in node.node.metadata for node in nodes)
