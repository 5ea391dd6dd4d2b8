"""`GuardedRetriever` over guardrail's own `CodeIndex`, embedded and on a `chroma run` server."""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import chromadb
import pytest
from chromadb.config import Settings as ChromaSettings
from llamaindex_pool import (
    CLAMP,
    CLAMP_CLONES,
    CLAMP_QUERY,
    CLAMP_TESTS,
    chroma_index,
    clamp_nodes,
)

from guardrail.gate import Gate
from guardrail.index import CodeIndex, Snippet
from llama_index.retrievers.guardrail import (
    METADATA_KEY,
    GuardedRetriever,
    GuardrailMiniLMEmbedding,
    TestedQueryBundle,
)

pytestmark = pytest.mark.docker


def _clamp_snippets() -> list[Snippet]:
    """The pool as snippets with their own tests stored (source 2: tests stored with the code)."""
    sources = {"correct": CLAMP, **CLAMP_CLONES}
    return [
        Snippet(
            code=code,
            entry_point="clamp",
            qualified_name="clamp",
            file=f"pool/{name}.py",
            start_line=1,
            end_line=code.count("\n"),
            tests=CLAMP_TESTS,
            extra={"variant": name},
        )
        for name, code in sources.items()
    ]


def _variants(nodes: list[Any]) -> list[str]:
    return [node.node.metadata["variant"] for node in nodes]


def _check_gated_code_index(index: CodeIndex, gate: Gate) -> None:
    index.add(_clamp_snippets())
    ungated = index.search(CLAMP_QUERY, k=6)
    assert ungated[0].metadata["variant"] != "correct", "precondition: a clone ranks first"

    retriever = GuardedRetriever(index, gate=gate, fetch_k=6, k=3)
    nodes = retriever.retrieve(CLAMP_QUERY)
    assert _variants(nodes) == ["correct"]
    verdict = nodes[0].node.metadata[METADATA_KEY]
    assert verdict["status"] == "verified"
    assert verdict["spec_source"] == "stored"
    assert nodes[0].node.node_id == ungated[verdict["retrieval_rank"]].id
    assert nodes[0].node.metadata["file"] == "pool/correct.py"


def test_guarded_retriever_over_an_embedded_code_index(
    tmp_path: Path, minilm: Any, gate: Gate
) -> None:
    index = CodeIndex("clamp-pool", path=tmp_path / "index", embedding_function=minilm)
    _check_gated_code_index(index, gate)


async def test_guarded_retriever_over_a_code_index_async(
    tmp_path: Path, minilm: Any, gate: Gate
) -> None:
    index = CodeIndex("clamp-pool", path=tmp_path / "index", embedding_function=minilm)
    index.add(_clamp_snippets())
    retriever = GuardedRetriever(index, gate=gate, fetch_k=6, k=3)
    nodes = await retriever.aretrieve(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS[:2]))
    # With only two tests the clone that mishandles values above the range passes too.
    assert sorted(_variants(nodes)) == ["clamp-returns-low-for-high", "correct"]
    for node in nodes:
        assert node.node.metadata[METADATA_KEY]["status"] == "verified"
        assert node.node.metadata[METADATA_KEY]["spec_source"] == "query"


@pytest.mark.chroma_server
def test_guarded_retriever_over_a_code_index_on_a_chroma_server(
    chroma_server_url: str, minilm: Any, gate: Gate
) -> None:
    index = CodeIndex("clamp-pool-server", url=chroma_server_url, embedding_function=minilm)
    _check_gated_code_index(index, gate)


@pytest.mark.chroma_server
def test_guarded_retriever_over_a_chroma_vector_store_on_a_chroma_server(
    chroma_server_url: str, embed_model: GuardrailMiniLMEmbedding, gate: Gate
) -> None:
    parts = urlsplit(chroma_server_url)
    assert parts.hostname is not None
    assert parts.port is not None
    client = chromadb.HttpClient(
        host=parts.hostname,
        port=parts.port,
        settings=ChromaSettings(anonymized_telemetry=False),
    )
    index = chroma_index(client, embed_model, clamp_nodes(stored_tests=True))
    base = index.as_retriever(similarity_top_k=6)
    assert base.retrieve(CLAMP_QUERY)[0].node.node_id != "clamp-correct"

    nodes = GuardedRetriever(base, gate=gate, k=3).retrieve(CLAMP_QUERY)
    assert [node.node.node_id for node in nodes] == ["clamp-correct"]
    assert nodes[0].node.metadata[METADATA_KEY]["spec_source"] == "stored"
