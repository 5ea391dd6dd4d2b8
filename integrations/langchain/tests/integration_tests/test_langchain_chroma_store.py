"""Wrapping a ``langchain_chroma.Chroma`` store's retriever; the compressor; the agent tool.

All against a real Chroma store (offline MiniLM through `ChromaEmbeddings`) and the real gate.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_chroma import Chroma
from langchain_classic.retrievers import ContextualCompressionRetriever
from langchain_core.documents import Document
from langchain_core.messages import ToolMessage
from langchain_pool import CHUNK, LEAP

from guardrail.gate import Gate
from langchain_guardrail import (
    METADATA_KEY,
    ChromaEmbeddings,
    ExecutionGateCompressor,
    GuardedCodeSearchTool,
    GuardedRetriever,
    verdict_of,
)

pytestmark = pytest.mark.docker


def _names(documents: list[Document]) -> list[str]:
    return [d.metadata["qualified_name"] for d in documents]


def test_chroma_embeddings_adapter_matches_the_chroma_function(minilm: Any) -> None:
    embeddings = ChromaEmbeddings(minilm)
    texts = ["def f(): pass", "split a list"]
    vectors = embeddings.embed_documents(texts)
    assert len(vectors) == 2 and all(len(v) == 384 for v in vectors)
    assert vectors == [[float(x) for x in v] for v in minilm(texts)]
    # Alone or in a batch the same text embeds alike (up to padding-dependent rounding).
    assert embeddings.embed_query(texts[1]) == pytest.approx(vectors[1], abs=1e-6)
    assert embeddings.embed_documents([]) == []


def test_wrapping_a_chroma_store_retriever_fetches_fetch_k(
    chroma_store: Chroma, gate: Gate
) -> None:
    base = chroma_store.as_retriever(search_kwargs={"k": 2})
    ungated = base.invoke(LEAP.query)
    assert len(ungated) == 2 and LEAP.canonical not in [d.page_content for d in ungated]
    assert ungated[0].metadata["qualified_name"] in LEAP.clones

    retriever = GuardedRetriever(base=base, gate=gate, fetch_k=10)
    documents = retriever.invoke(LEAP.query, tests=list(LEAP.tests))
    assert [d.page_content for d in documents] == [LEAP.canonical]
    assert verdict_of(documents[0]) is not None
    assert documents[0].id in {d.id for d in base.invoke(LEAP.query, k=10)}  # the store's own id


async def test_wrapping_a_chroma_store_retriever_async(chroma_store: Chroma, gate: Gate) -> None:
    retriever = GuardedRetriever(base=chroma_store.as_retriever(), gate=gate, k=2)
    documents = await retriever.ainvoke(CHUNK.query, tests=list(CHUNK.tests))
    assert [d.page_content for d in documents] == [CHUNK.canonical]
    assert documents[0].metadata[METADATA_KEY]["status"] == "verified"


def test_compressor_inside_contextual_compression_retriever(
    chroma_store: Chroma, gate: Gate
) -> None:
    base = chroma_store.as_retriever(search_kwargs={"k": 6})
    compressor = ExecutionGateCompressor(gate=gate, tests=list(LEAP.tests))
    retriever = ContextualCompressionRetriever(base_compressor=compressor, base_retriever=base)
    documents = retriever.invoke(LEAP.query)
    assert _names(documents) == ["is_leap_year"]
    assert documents[0].metadata[METADATA_KEY]["spec_source"] == "query"


async def test_compressor_async_keeps_verified_first_then_unverifiable(
    chroma_store: Chroma, gate: Gate
) -> None:
    def leap_tests_only(query: str, document: Document) -> list[str] | None:
        return list(LEAP.tests) if "leap" in document.metadata["qualified_name"] else None

    documents = chroma_store.similarity_search(LEAP.query, k=10)
    compressor = ExecutionGateCompressor(gate=gate, test_provider=leap_tests_only)
    kept = list(await compressor.acompress_documents(documents, LEAP.query))
    statuses = [d.metadata[METADATA_KEY]["status"] for d in kept]
    assert kept[0].page_content == LEAP.canonical
    assert statuses == ["verified"] + ["unverifiable"] * (len(kept) - 1)
    assert len(kept) == len(documents) - len(LEAP.clones)
    assert all(METADATA_KEY not in d.metadata for d in documents)  # inputs left untouched


def test_tool_returns_verified_code_and_the_documents(chroma_store: Chroma, gate: Gate) -> None:
    tool = GuardedCodeSearchTool(
        retriever=GuardedRetriever(base=chroma_store.as_retriever(), gate=gate, policy="filter")
    )
    message = tool.invoke(_call(tool, CHUNK.query, list(CHUNK.tests)))
    assert isinstance(message, ToolMessage) and isinstance(message.content, str)
    assert message.content.startswith("1 result(s) for 'split a list into chunks")
    assert "[1] VERIFIED against your tests: passed 3/3 - chunk" in message.content
    assert CHUNK.canonical.strip() in message.content
    assert [d.page_content for d in message.artifact] == [CHUNK.canonical]


async def test_tool_says_plainly_when_nothing_could_be_verified(
    chroma_store: Chroma, gate: Gate
) -> None:
    retriever = GuardedRetriever(base=chroma_store.as_retriever(), gate=gate)
    tool = GuardedCodeSearchTool(retriever=retriever)
    impossible = ["assert is_leap_year(2023)"]  # no correct function passes this
    message = await tool.ainvoke(_call(tool, LEAP.query, impossible))
    assert message.content.startswith(f"Nothing could be verified for {LEAP.query!r}")
    head = message.content.splitlines()
    assert "candidates ran and all failed your tests" in head[0]
    assert head[0].endswith("First failing test: assert is_leap_year(2023)")
    assert "  [4] is_leap_year returned False" in head
    assert head[-1].startswith("All 4 returned False on it: if that is the right answer, the test")
    assert "def is_leap_year" not in message.content  # failed code is never offered
    # The artifact holds what ran and failed, with its verdict (values by the judge).
    failed = [d for d in message.artifact if d.metadata[METADATA_KEY]["status"] == "failed"]
    assert len(failed) == 4
    returned = failed[0].metadata[METADATA_KEY]["tests"][0]["returned"]
    assert (returned["kind"], returned["text"]) == ("value", "False")
    # Without tests, the snippets (which have no stored tests) come back labelled UNVERIFIED.
    message = tool.invoke(_call(tool, LEAP.query, None))
    assert message.content.startswith("Nothing could be verified")
    assert "call this tool again with tests" in message.content
    judged_by_nothing = (
        "UNVERIFIED: judged against nothing (no tests were given and none are stored)"
    )
    assert message.content.count(judged_by_nothing) == len(message.artifact) == 4
    assert all(d.metadata[METADATA_KEY]["judged_against"] == "nothing" for d in message.artifact)


def _call(tool: GuardedCodeSearchTool, query: str, tests: list[str] | None) -> dict[str, Any]:
    args: dict[str, Any] = {"query": query} if tests is None else {"query": query, "tests": tests}
    return {"name": tool.name, "args": args, "id": "call-1", "type": "tool_call"}
