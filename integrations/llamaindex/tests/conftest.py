"""Fixtures for the LlamaIndex integration tests: offline MiniLM, an embedded Chroma, MockLLM."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import chromadb
import pytest
from chromadb.api import ClientAPI
from chromadb.config import Settings as ChromaSettings
from llama_index.core import Settings, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llamaindex_pool import chroma_index, clamp_nodes

from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from llama_index.retrievers.guardrail import GuardrailMiniLMEmbedding


@pytest.fixture(scope="session")
def embed_model(minilm: Any) -> GuardrailMiniLMEmbedding:
    """The session's MiniLM as a LlamaIndex embedding model (loaded once)."""
    return GuardrailMiniLMEmbedding(minilm)


@pytest.fixture(scope="session")
def chroma_client(tmp_path_factory: pytest.TempPathFactory) -> ClientAPI:
    """An embedded Chroma on disk, private to this test tree (unique collection names per test).

    Not an `EphemeralClient`: all of those in one process share one database and its settings.
    """
    path = tmp_path_factory.mktemp("llamaindex-chroma")
    return chromadb.PersistentClient(str(path), ChromaSettings(anonymized_telemetry=False))


@pytest.fixture(scope="session")
def clamp_index(
    chroma_client: ClientAPI, embed_model: GuardrailMiniLMEmbedding
) -> VectorStoreIndex:
    """The near-clone pool in an embedded Chroma, tests not stored (read-only: shared)."""
    return chroma_index(chroma_client, embed_model, clamp_nodes())


@pytest.fixture
def mock_llm() -> Iterator[MockLLM]:
    """`Settings.llm` set to an echoing `MockLLM` (LlamaIndex would reach for OpenAI otherwise)."""
    previous = Settings._llm
    llm = MockLLM()
    Settings.llm = llm
    yield llm
    Settings._llm = previous


@pytest.fixture
def idle_gate() -> Iterator[Gate]:
    """A real `Gate` for tests that must fail before anything runs (no engine needed)."""
    gate = Gate(DockerSandbox(pool_size=1), cache=False)
    yield gate
    gate.close()
