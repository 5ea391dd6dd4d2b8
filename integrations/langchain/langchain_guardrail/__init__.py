"""LangChain integration for guardrail: code retrieval with an execution gate.

* `GuardedRetriever` - wraps any code retriever (a `CodeIndex`, a vector store's retriever, ...)
  and returns only code that ran and passed tests, verified first.
* `ExecutionGateCompressor` - the same gate as a document compressor
  (for ``ContextualCompressionRetriever``).
* `GuardedCodeSearchTool` - retrieve-then-verify as an agent tool.
* `ChromaEmbeddings` - a Chroma embedding function as LangChain embeddings.

Every returned Document carries its verdict under ``metadata["guardrail"]`` (`METADATA_KEY`),
a JSON-serialisable dict; `verdict_of(document)` reads it back as a `Verdict`.
"""

from guardrail.integration import METADATA_KEY
from langchain_guardrail._gating import verdict_of
from langchain_guardrail.document_compressors import ExecutionGateCompressor
from langchain_guardrail.embeddings import ChromaEmbeddings
from langchain_guardrail.retrievers import GuardedRetriever
from langchain_guardrail.tools import GuardedCodeSearchTool

__all__ = [
    "METADATA_KEY",
    "ChromaEmbeddings",
    "ExecutionGateCompressor",
    "GuardedCodeSearchTool",
    "GuardedRetriever",
    "verdict_of",
]
