"""LangChain's own standard unit tests for the tool and the embeddings, subclassed (never forked).

The tool is built over a real `Gate` whose Docker sandbox is never started (unit tests only build
the tool and read its schema) and a retriever that returns nothing; the embeddings are the real
`ChromaEmbeddings` over the session's offline MiniLM (`minilm`, root ``conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.runnables import RunnableLambda
from langchain_tests.unit_tests import EmbeddingsUnitTests, ToolsUnitTests

from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from langchain_guardrail import ChromaEmbeddings, GuardedCodeSearchTool, GuardedRetriever

TOOL_ARGS = {
    "query": "split a list into chunks of a given size",
    "tests": ["assert chunk([1, 2, 3], 2) == [[1, 2], [3]]"],
}


class TestGuardedCodeSearchToolUnit(ToolsUnitTests):
    @pytest.fixture(autouse=True)
    def _gate(self) -> Iterator[None]:
        # Autouse fixtures run before the standard `tool` fixture builds the tool.
        self._idle_gate = Gate(DockerSandbox(pool_size=1), cache=False)
        yield
        self._idle_gate.close()

    @property
    def tool_constructor(self) -> type[GuardedCodeSearchTool]:
        return GuardedCodeSearchTool

    @property
    def tool_constructor_params(self) -> dict[str, Any]:
        nothing: RunnableLambda[str, list[Document]] = RunnableLambda(lambda query: [])
        return {"retriever": GuardedRetriever(base=nothing, gate=self._idle_gate)}

    @property
    def tool_invoke_params_example(self) -> dict[str, Any]:
        return TOOL_ARGS


class TestChromaEmbeddingsUnit(EmbeddingsUnitTests):
    @pytest.fixture(autouse=True)
    def _function(self, minilm: Any) -> None:
        self._minilm = minilm

    @property
    def embeddings_class(self) -> type[ChromaEmbeddings]:
        return ChromaEmbeddings

    @property
    def embedding_model_params(self) -> dict[str, Any]:
        return {"function": self._minilm}
