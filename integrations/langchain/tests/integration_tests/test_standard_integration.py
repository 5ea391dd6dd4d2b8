"""LangChain's own standard integration tests for the tool and the embeddings, subclassed.

The tool searches a real Chroma store (offline MiniLM) through a `GuardedRetriever` over the real
Docker gate, with the tests an agent would give; the embeddings are the real `ChromaEmbeddings`
over the offline MiniLM. Beside them, checks that the standard calls really went through the gate.
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_chroma import Chroma
from langchain_core.messages import ToolMessage
from langchain_pool import CHUNK
from langchain_tests.integration_tests import EmbeddingsIntegrationTests, ToolsIntegrationTests

from guardrail.gate import Gate
from guardrail.integration import METADATA_KEY
from langchain_guardrail import ChromaEmbeddings, GuardedCodeSearchTool, GuardedRetriever

pytestmark = pytest.mark.docker


class TestGuardedCodeSearchToolIntegration(ToolsIntegrationTests):
    @pytest.fixture(autouse=True)
    def _parts(self, gate: Gate, chroma_store: Chroma) -> None:
        # Autouse fixtures run before the standard `tool` fixture builds the tool.
        self._gate = gate
        self._store = chroma_store

    @property
    def tool_constructor(self) -> type[GuardedCodeSearchTool]:
        return GuardedCodeSearchTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        retriever = GuardedRetriever(base=self._store.as_retriever(), gate=self._gate, k=2)
        return {"retriever": retriever}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return {"query": CHUNK.query, "tests": list(CHUNK.tests)}

    def test_the_example_call_is_verified_in_the_sandbox(self, tool: GuardedCodeSearchTool) -> None:
        # Not a standard test: shows the standard calls above ran through the real gate.
        call = {"name": tool.name, "args": self.tool_invoke_params_example, "id": "1"}
        message = tool.invoke({**call, "type": "tool_call"})
        assert isinstance(message, ToolMessage)
        assert str(message.content).startswith("1 result(s) for 'split a list into chunks")
        [verified] = [d for d in message.artifact if d.metadata[METADATA_KEY]["verified"]]
        assert verified.page_content == CHUNK.canonical


class TestChromaEmbeddingsIntegration(EmbeddingsIntegrationTests):
    @pytest.fixture(autouse=True)
    def _function(self, minilm: Any) -> None:
        self._minilm = minilm

    @property
    def embeddings_class(self) -> type[ChromaEmbeddings]:
        return ChromaEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"function": self._minilm}

    def test_vectors_are_minilm_and_queries_embed_like_documents(
        self, model: ChromaEmbeddings
    ) -> None:
        [document] = model.embed_documents(["def chunk(items, size): ..."])
        assert len(document) == 384
        assert model.embed_query("def chunk(items, size): ...") == document
