"""The gate's question through LlamaIndex: a real `VectorStoreIndex` on Chroma with MiniLM, the
real Docker gate, `GuardedRetriever` (sync and async) and its postprocessor."""

from __future__ import annotations

import asyncio

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.schema import MetadataMode, QueryBundle
from llamaindex_pool import CLAMP, CLAMP_QUERY, CORRECT_ID

from guardrail.gate import Gate
from guardrail.integration import QUESTION_KEY, question_from_metadata
from llama_index.retrievers.guardrail import (
    METADATA_KEY,
    ExecutionGatePostprocessor,
    GuardedQueryEngine,
    GuardedRetriever,
    TestedQueryBundle,
)

pytestmark = pytest.mark.docker

THIN = ["assert clamp(5, 0, 10) == 5"]  # the correct clamp and several clones pass it


def test_the_retriever_exposes_the_question_on_nodes_and_as_last_question(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    retriever = GuardedRetriever(clamp_index, gate=gate, fetch_k=6, k=6)
    nodes = retriever.retrieve(TestedQueryBundle(CLAMP_QUERY, tests=THIN))
    question = retriever.last_question
    assert question is not None and len(nodes) >= 2
    assert all(question_from_metadata(n.node.metadata) == question for n in nodes)
    llm_text = nodes[0].node.get_content(MetadataMode.LLM)
    embedded = nodes[0].node.get_content(MetadataMode.EMBED)
    assert QUESTION_KEY not in llm_text and QUESTION_KEY not in embedded
    (right,) = [a for a in question.answers if CORRECT_ID in a.candidate_ids]
    assert right.test is not None
    settled = retriever.retrieve(TestedQueryBundle(CLAMP_QUERY, tests=[*THIN, right.test]))
    assert {n.node.node_id for n in settled} == set(right.candidate_ids)
    assert CORRECT_ID in {n.node.node_id for n in settled}
    again = asyncio.run(retriever.aretrieve(TestedQueryBundle(CLAMP_QUERY, tests=THIN)))
    assert retriever.last_question == question
    assert question_from_metadata(again[0].node.metadata) == question
    retriever.retrieve(TestedQueryBundle(CLAMP_QUERY, tests=[*THIN, right.test]))
    if len(right.candidate_ids) == 1:
        assert retriever.last_question is None  # one verified: nothing to ask


def test_the_postprocessor_attaches_the_question_too(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    raw = clamp_index.as_retriever(similarity_top_k=6).retrieve(CLAMP_QUERY)
    processed = ExecutionGatePostprocessor(gate=gate, tests=THIN).postprocess_nodes(
        raw, QueryBundle(CLAMP_QUERY)
    )
    question = question_from_metadata(processed[0].node.metadata)
    assert question is not None
    assert any(n.node.get_content(MetadataMode.NONE) == CLAMP for n in processed)
    assert question.probe.entry_point == "clamp"


async def test_under_agree_the_query_engine_withholds_and_asks(
    clamp_index: VectorStoreIndex, gate: Gate, mock_llm: MockLLM
) -> None:
    retriever = GuardedRetriever(clamp_index, gate=gate, fetch_k=6, k=6, policy="agree")
    engine = GuardedQueryEngine.from_args(retriever)
    bundle = TestedQueryBundle(CLAMP_QUERY, tests=THIN)
    for response in (engine.query(bundle), await engine.aquery(bundle)):
        text = str(response)  # said by the engine: the LLM (an echo) was never called
        assert text.startswith(f"Nothing is handed over for {CLAMP_QUERY!r}: ")
        assert "ran and passed the tests but do not agree on an input" in text
        question = retriever.last_question
        assert question is not None and question.render() in text
        # What ran and was not handed over, with its verdict: the withheld ones are the
        # question's candidates.
        withheld = [
            n.node.node_id
            for n in response.source_nodes
            if n.node.metadata[METADATA_KEY]["status"] == "verified"
        ]
        assert sorted(withheld) == sorted(c for a in question.answers for c in a.candidate_ids)
