"""Against a real `chroma run` server: a `CodeIndex` over HTTP and a langchain-chroma store."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import chromadb
import pytest
from chromadb.config import Settings
from langchain_chroma import Chroma
from langchain_core.documents import Document
from langchain_pool import CHUNK, LEAP, near_clone_snippets, unique_name

from guardrail.gate import Gate
from guardrail.index import CodeIndex
from langchain_guardrail import METADATA_KEY, ChromaEmbeddings, GuardedRetriever

pytestmark = [pytest.mark.chroma_server, pytest.mark.docker]


async def test_code_index_on_a_chroma_server(
    chroma_server_url: str, minilm: Any, gate: Gate
) -> None:
    index = CodeIndex(unique_name("lc-server"), url=chroma_server_url, embedding_function=minilm)
    index.add(near_clone_snippets())
    assert index.search(LEAP.query, k=1)[0].metadata["qualified_name"] in LEAP.clones

    retriever = GuardedRetriever(base=index, gate=gate)
    documents = retriever.invoke(LEAP.query, tests=list(LEAP.tests))
    assert [d.page_content for d in documents] == [LEAP.canonical]
    documents = await retriever.ainvoke(CHUNK.query, tests=list(CHUNK.tests))
    assert [d.page_content for d in documents] == [CHUNK.canonical]
    assert documents[0].metadata[METADATA_KEY]["status"] == "verified"


def test_langchain_chroma_store_on_a_chroma_server(
    chroma_server_url: str, minilm: Any, gate: Gate
) -> None:
    url = urlsplit(chroma_server_url)
    client = chromadb.HttpClient(
        host=url.hostname or "",
        port=url.port or 8000,
        settings=Settings(anonymized_telemetry=False),
    )
    store = Chroma(
        collection_name=unique_name("lc-server-store"),
        embedding_function=ChromaEmbeddings(minilm),
        client=client,
    )
    store.add_documents(
        [
            Document(
                page_content=s.code, metadata={"qualified_name": s.qualified_name, "tests": "[]"}
            )
            for s in near_clone_snippets()
        ]
    )
    retriever = GuardedRetriever(base=store.as_retriever(), gate=gate, k=2)
    documents = retriever.invoke(CHUNK.query, tests=list(CHUNK.tests))
    assert [d.page_content for d in documents] == [CHUNK.canonical]
    # Stored `tests` of "[]" (JSON, as Chroma stores lists) mean no tests: unverifiable.
    unverified = retriever.invoke(CHUNK.query)
    assert [d.metadata[METADATA_KEY]["spec_source"] for d in unverified] == ["none", "none"]
    store.delete_collection()
