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

The ``callbacks`` a compressor is called with (``ContextualCompressionRetriever`` passes its
run's child) see the gate as one chain run named ``ExecutionGateCompressor``: its start (the
query and how many documents), its end (how many were kept and verified) or its error.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.callbacks import AsyncCallbackManager, CallbackManager, Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from pydantic import ConfigDict

from guardrail.integration import METADATA_KEY
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
        """The documents the policy keeps, verified first, each with its verdict; ``callbacks``
        see it as one chain run."""
        run = CallbackManager.configure(callbacks).on_chain_start(
            None, _inputs(query, documents), name=_RUN_NAME
        )
        try:
            plan = self.plan(query, documents)
            result = self.gate.gate(plan.candidates, plan.specs, policy=self.policy)
            kept = gated_documents(plan, result, include_paths=self.include_paths)
        except BaseException as exc:
            run.on_chain_error(exc)
            raise
        run.on_chain_end(_outputs(kept))
        return kept

    async def acompress_documents(
        self, documents: Sequence[Document], query: str, callbacks: Callbacks | None = None
    ) -> Sequence[Document]:
        """`compress_documents`, verifying the documents concurrently without blocking the loop."""
        run = await AsyncCallbackManager.configure(callbacks).on_chain_start(
            None, _inputs(query, documents), name=_RUN_NAME
        )
        try:
            plan = self.plan(query, documents)
            result = await self.gate.agate(plan.candidates, plan.specs, policy=self.policy)
            kept = gated_documents(plan, result, include_paths=self.include_paths)
        except BaseException as exc:
            await run.on_chain_error(exc)
            raise
        await run.on_chain_end(_outputs(kept))
        return kept


_RUN_NAME = "ExecutionGateCompressor"


def _inputs(query: str, documents: Sequence[Document]) -> dict[str, Any]:
    return {"query": query, "documents": len(documents)}


def _outputs(kept: Sequence[Document]) -> dict[str, Any]:
    verified = sum(bool(d.metadata[METADATA_KEY].get("verified")) for d in kept)
    return {"kept": len(kept), "verified": verified}
