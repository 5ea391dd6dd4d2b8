"""`ChromaEmbeddings`: a Chroma embedding function as LangChain `Embeddings`.

`CodeIndex` and Chroma collections take a Chroma embedding function (for example the offline
``guardrail.index.minilm_embedding()``); a ``langchain_chroma.Chroma`` store takes LangChain
`Embeddings`. This adapter lets both share one model, so a LangChain store over an existing
collection embeds queries exactly as the collection's documents were embedded.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.embeddings import Embeddings

__all__ = ["ChromaEmbeddings"]


class ChromaEmbeddings(Embeddings):
    """Wrap a Chroma embedding function (``fn(input=[texts]) -> [vectors]``).

    Args:
        function: any Chroma ``EmbeddingFunction``, or a callable with the same contract.
    """

    def __init__(self, function: Callable[..., Sequence[Any]]) -> None:
        if not callable(function):
            raise TypeError(f"expected a Chroma embedding function, got {function!r}")
        self.function = function

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, as plain floats."""
        if not texts:
            return []
        return [[float(x) for x in vector] for vector in self.function(input=texts)]

    def embed_query(self, text: str) -> list[float]:
        """The vector of one query, embedded exactly like a document."""
        return self.embed_documents([text])[0]
