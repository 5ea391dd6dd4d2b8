"""The collections ``POST /v1/search`` reads: opened by name in the configured index, kept open.

A client names a collection, never a path: the index directory (or Chroma server) and the
embedding are the server's settings. A collection is opened read-only (``create=False``: a
missing one is `IndexNotFoundError`, 404, and nothing is created) on first use and then kept,
with its embedding model loaded, for every later query. Opening a collection trusts the folders
it was indexed from as context roots (`guardrail.roots`), as any process that opens it does.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from guardrail.index import CodeIndex

__all__ = ["OpenIndexes"]


class OpenIndexes:
    """Collections of one index location, opened on first use (thread-safe)."""

    def __init__(
        self, index_dir: Path | None, chroma_url: str | None, embedding: str = "minilm"
    ) -> None:
        self.index_dir = index_dir
        self.chroma_url = chroma_url
        self.embedding = embedding
        self._open: dict[str, CodeIndex] = {}
        self._lock = threading.Lock()
        self._function: object = None

    def get(self, collection: str) -> CodeIndex:
        """The collection, opened once (blocking: call it from a worker thread)."""
        with self._lock:
            index = self._open.get(collection)
            if index is None:
                from guardrail.index import CodeIndex, load_embedding

                if self._function is None:
                    self._function = load_embedding(self.embedding, fast_queries=True)
                index = CodeIndex(
                    collection,
                    path=self.index_dir,
                    url=self.chroma_url,
                    embedding_function=self._function,  # type: ignore[arg-type]
                    create=False,
                )
                self._open[collection] = index
            return index

    def __len__(self) -> int:
        return len(self._open)
