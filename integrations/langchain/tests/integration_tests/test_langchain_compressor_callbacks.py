"""The compressor honours the ``callbacks`` it is called with, inside LangChain's own
``ContextualCompressionRetriever``; and what that retriever cannot do that `GuardedRetriever` does.

A real callback handler records the runs LangChain reports; real Chroma store, real Docker gate.
"""

from __future__ import annotations

from typing import Any
from uuid import UUID

import pytest
from langchain_chroma import Chroma
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.callbacks import BaseCallbackHandler
from langchain_pool import LEAP

from guardrail.errors import SpecError
from guardrail.gate import Gate
from langchain_guardrail import METADATA_KEY, ExecutionGateCompressor, GuardedRetriever

pytestmark = pytest.mark.docker


class Recorder(BaseCallbackHandler):
    """Every retriever and chain event, with its run and parent run ids."""

    def __init__(self) -> None:
        self.events: list[tuple[str, str | None, UUID, UUID | None, Any]] = []

    def on_retriever_start(
        self,
        serialized: Any,
        query: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.events.append(("retriever_start", None, run_id, parent_run_id, query))

    def on_chain_start(
        self,
        serialized: Any,
        inputs: Any,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.events.append(("chain_start", kwargs.get("name"), run_id, parent_run_id, inputs))

    def on_chain_end(
        self, outputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None, **kwargs: Any
    ) -> None:
        self.events.append(("chain_end", None, run_id, parent_run_id, outputs))

    def on_chain_error(
        self,
        error: BaseException,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        self.events.append(("chain_error", None, run_id, parent_run_id, type(error).__name__))


def _compression(store: Chroma, gate: Gate, tests: list[str]) -> ContextualCompressionRetriever:
    compressor = ExecutionGateCompressor(gate=gate, tests=tests)
    base = store.as_retriever(search_kwargs={"k": 6})
    return ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)


def _check_gate_run(recorder: Recorder) -> None:
    outer = recorder.events[0]
    assert outer[0] == "retriever_start" and outer[3] is None  # the compression retriever
    [start] = [e for e in recorder.events if e[:2] == ("chain_start", "ExecutionGateCompressor")]
    _, _, gate_run, parent, inputs = start
    assert parent == outer[2]  # the gate's run is a child of the compression retriever's
    assert inputs == {"query": LEAP.query, "documents": 6}
    [end] = [e for e in recorder.events if e[2] == gate_run and e[0] != "chain_start"]
    assert end[0] == "chain_end" and end[4] == {"kept": 1, "verified": 1}


def test_the_compressor_reports_its_run_to_the_callbacks(chroma_store: Chroma, gate: Gate) -> None:
    recorder = Recorder()
    retriever = _compression(chroma_store, gate, list(LEAP.tests))
    documents = retriever.invoke(LEAP.query, {"callbacks": [recorder]})
    assert [d.page_content for d in documents] == [LEAP.canonical]
    _check_gate_run(recorder)


async def test_the_compressor_reports_its_run_to_the_callbacks_async(
    chroma_store: Chroma, gate: Gate
) -> None:
    recorder = Recorder()
    retriever = _compression(chroma_store, gate, list(LEAP.tests))
    documents = await retriever.ainvoke(LEAP.query, {"callbacks": [recorder]})
    assert [d.page_content for d in documents] == [LEAP.canonical]
    _check_gate_run(recorder)


def test_a_failed_gate_run_is_reported_as_an_error(chroma_store: Chroma, gate: Gate) -> None:
    recorder = Recorder()
    retriever = _compression(chroma_store, gate, ["assert is_leap_year(2024"])
    with pytest.raises(SpecError):
        retriever.invoke(LEAP.query, {"callbacks": [recorder]})
    assert ("chain_error", "SpecError") in [(kind, what) for kind, _, _, _, what in recorder.events]


def test_per_query_tests_reach_the_gated_retriever_but_not_a_compressor(
    chroma_store: Chroma, gate: Gate
) -> None:
    # Why GuardedRetriever exists beside ContextualCompressionRetriever: an agent's tests travel
    # with its query. The compression retriever hands call keywords to its base retriever (here
    # Chroma's search, which refuses them), never to its compressor.
    compression = _compression(chroma_store, gate, [])
    with pytest.raises(TypeError):
        compression.invoke(LEAP.query, tests=list(LEAP.tests))
    gated = GuardedRetriever(base=chroma_store.as_retriever(), gate=gate)
    [document] = gated.invoke(LEAP.query, tests=list(LEAP.tests), policy="filter")
    assert document.metadata[METADATA_KEY]["spec_source"] == "query"
