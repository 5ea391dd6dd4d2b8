"""Fixtures of the LangChain integration tests: real Chroma, the real offline MiniLM.

The root ``conftest.py`` provides ``gate`` / ``docker_sandbox`` (the real Docker sandbox),
``minilm`` (one offline MiniLM embedding function per session) and ``chroma_server_url``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_pool import near_clone_snippets, unique_name, utility_snippets

from guardrail.index import CodeIndex


@pytest.fixture
def near_clone_index(minilm: Any) -> CodeIndex:
    index = CodeIndex(unique_name("near-clones"), embedding_function=minilm, ephemeral=True)
    index.add(near_clone_snippets())
    return index


@pytest.fixture
def utility_index(minilm: Any) -> CodeIndex:
    index = CodeIndex(unique_name("utilities"), embedding_function=minilm, ephemeral=True)
    index.add(utility_snippets())
    return index


@pytest.fixture
def chroma_store(minilm: Any) -> Iterator[Any]:
    """A ``langchain_chroma.Chroma`` store of the near-clone pool (no stored tests)."""
    import chromadb
    from chromadb.config import Settings
    from langchain_chroma import Chroma
    from langchain_core.documents import Document

    from langchain_guardrail import ChromaEmbeddings

    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    store = Chroma(
        collection_name=unique_name("lc-store"),
        embedding_function=ChromaEmbeddings(minilm),
        client=client,
        collection_metadata={"hnsw:space": "cosine"},
    )
    store.add_documents(
        [
            Document(page_content=s.code, metadata={"qualified_name": s.qualified_name})
            for s in near_clone_snippets()
        ]
    )
    yield store
    store.delete_collection()
