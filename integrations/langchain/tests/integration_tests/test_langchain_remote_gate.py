"""The LangChain integration over `RemoteGate` (a real ``guardrail serve`` on loopback): the
agent loop, the async retriever and the compressor take it exactly as they take a `Gate`.

The chat model is LangChain's fake one, scripted as in ``test_langchain_agent_loop``; the
index, the service and its Docker gate are real.
"""

from __future__ import annotations

import pytest
from langchain_core.documents import Document
from langchain_pool import CHUNK, LEAP
from test_langchain_agent_loop import FINAL_ANSWER, REQUEST, _calls, _executor

from guardrail.client import RemoteGate
from guardrail.index import CodeIndex
from langchain_guardrail import (
    ExecutionGateCompressor,
    GuardedCodeSearchTool,
    GuardedRetriever,
    verdict_of,
)

pytestmark = pytest.mark.docker


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
async def test_an_agent_loop_searches_through_the_shared_service(
    near_clone_index: CodeIndex, remote_gate: RemoteGate, mode: str
) -> None:
    retriever = GuardedRetriever(base=near_clone_index, gate=remote_gate)
    tool = GuardedCodeSearchTool(retriever=retriever)
    executor = _executor(tool, _calls(["assert chunk([1, 2, 3], 2 == [[1, 2], [3]]"],
                                      list(CHUNK.tests)))  # fmt: skip
    result = executor.invoke(REQUEST) if mode == "invoke" else await executor.ainvoke(REQUEST)

    assert result["output"] == FINAL_ANSWER
    bad, good = (str(observation) for _, observation in result["intermediate_steps"])
    assert bad.startswith("Your tests could not be used, so nothing ran:")
    assert good.startswith(f"1 result(s) for {CHUNK.query!r} ran and passed your tests.")
    assert "[1] VERIFIED against your tests: passed 3/3 - chunk" in good


async def test_the_retriever_and_compressor_hand_over_only_verified_code(
    near_clone_index: CodeIndex, remote_gate: RemoteGate
) -> None:
    retriever = GuardedRetriever(base=near_clone_index, gate=remote_gate, k=1, fetch_k=6)
    [document] = await retriever.ainvoke(LEAP.query, tests=list(LEAP.tests))
    assert document.page_content == LEAP.canonical
    verdict = verdict_of(document)
    assert verdict is not None and verdict.verified

    documents = [Document(page_content=code) for code in (*LEAP.clones.values(), LEAP.canonical)]
    compressor = ExecutionGateCompressor(gate=remote_gate, tests=list(LEAP.tests))
    kept = compressor.compress_documents(documents, LEAP.query)
    assert [d.page_content for d in kept] == [LEAP.canonical]
