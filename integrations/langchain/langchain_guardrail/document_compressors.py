"""`ExecutionGateCompressor`: the gate as a document compressor.

For pipelines that already post-process retrieved documents, e.g. LangChain's
``ContextualCompressionRetriever``::

    from langchain_classic.retrievers import ContextualCompressionRetriever

    retriever = ContextualCompressionRetriever(
        base_compressor=ExecutionGateCompressor(gate=Gate(), tests=[...]),
        base_retriever=store.as_retriever(),
    )

Documents that failed their tests are dropped, verified ones come first, and each kept document
carries its verdict under ``metadata["guardrail"]``.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ConfigDict

from langchain_guardrail._gating import GateSettings, gated_documents

__all__ = ["ExecutionGateCompressor"]


class ExecutionGateCompressor(BaseDocumentCompressor, GateSettings):
    """Verify documents whose page content is code; keep and order them by the gate's policy.

    A compressor call has no room for per-query tests, so tests come from the ``tests`` field,
    else ``test_provider(query, document)``, else the tests stored in each document's metadata.
    Use `GuardedRetriever` to pass tests with each query.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    def compress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """The documents the policy keeps, verified first, each with its verdict."""
        plan = self.plan(query, documents)
        result = self.gate.gate(plan.candidates, plan.specs, policy=self.policy)
        return gated_documents(plan, result, include_paths=self.include_paths)

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """`compress_documents`, verifying the documents concurrently without blocking the loop."""
        plan = self.plan(query, documents)
        result = await self.gate.agate(plan.candidates, plan.specs, policy=self.policy)
        return gated_documents(plan, result, include_paths=self.include_paths)
