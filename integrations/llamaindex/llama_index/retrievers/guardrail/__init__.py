"""guardrail for LlamaIndex: retrieved code is run against tests before anyone acts on it.

* `GuardedRetriever` wraps any retriever (or a guardrail `CodeIndex`) and returns verified code
  first, never code that failed;
* `ExecutionGatePostprocessor` does the same as a node postprocessor;
* `GuardedQueryEngine` answers "Nothing verified ..." instead of "Empty Response";
* `TestedQueryBundle` carries a query's tests through ``retrieve`` and ``query_engine.query``;
* `verdict_of` reads the `Verdict` stored under ``node.metadata["guardrail"]``;
* `GuardrailMiniLMEmbedding` is an offline embedding model for LlamaIndex indexes.
"""

from guardrail.integration import METADATA_KEY
from guardrail.sources import SpecSource
from llama_index.retrievers.guardrail._gating import VERDICT_TEXT_KEY, verdict_of
from llama_index.retrievers.guardrail.base import GuardedRetriever, TestedQueryBundle
from llama_index.retrievers.guardrail.embedding import GuardrailMiniLMEmbedding
from llama_index.retrievers.guardrail.postprocessor import ExecutionGatePostprocessor
from llama_index.retrievers.guardrail.query_engine import GuardedQueryEngine

__all__ = [
    "METADATA_KEY",
    "VERDICT_TEXT_KEY",
    "ExecutionGatePostprocessor",
    "GuardedQueryEngine",
    "GuardedRetriever",
    "GuardrailMiniLMEmbedding",
    "SpecSource",
    "TestedQueryBundle",
    "verdict_of",
]
