"""A LlamaIndex query engine over guardrail's gated retriever: only verified code reaches the LLM.

A small code pool (a correct ``is_leap_year`` and four single-line clones of it, each buggy) is
embedded with the offline MiniLM into a Chroma collection through LlamaIndex's ChromaVectorStore.
The plain retriever ranks a buggy clone first; the gated retriever runs every candidate against the
query's tests in the Docker sandbox and hands the query engine the correct function only.

Runs offline. Needs the sandbox image (``scripts/docker-up``) and::

    pip install -e . -e 'integrations/llamaindex[test]'

    .venv/bin/python examples/llamaindex_query_engine.py

The LLM is LlamaIndex's ``MockLLM``, which answers with the prompt it was given: the output shows
exactly what an LLM would have been shown. Put your own LLM in ``Settings.llm``.
"""

from __future__ import annotations

import chromadb
from chromadb.config import Settings as ChromaSettings
from llama_index.core import Settings, StorageContext, VectorStoreIndex
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, TextNode
from llama_index.vector_stores.chroma import ChromaVectorStore

from guardrail import Gate
from llama_index.retrievers.guardrail import (
    GuardedRetriever,
    GuardrailMiniLMEmbedding,
    TestedQueryBundle,
    verdict_of,
)

CORRECT = '''def is_leap_year(year):
    """True when year is a leap year in the Gregorian calendar."""
    if year % 400 == 0:
        return True
    if year % 100 == 0:
        return False
    return year % 4 == 0
'''

POOL = {
    "correct": CORRECT,
    "clone-wrong-comparison": CORRECT.replace("year % 400 == 0", "year % 400 != 0"),
    "clone-wrong-constant": CORRECT.replace("        return False", "        return True"),
    "clone-off-by-one": CORRECT.replace("return year % 4 == 0", "return year % 4 == 1"),
    "clone-wrong-operand": CORRECT.replace("if year % 100 == 0", "if year % 10 == 0"),
}

QUERY = "check whether a year is a leap year"
TESTS = [
    "assert is_leap_year(2000) is True",
    "assert is_leap_year(1900) is False",
    "assert is_leap_year(2024) is True",
    "assert is_leap_year(2020) is True",
    "assert is_leap_year(2023) is False",
]


def build_index(embed_model: GuardrailMiniLMEmbedding) -> VectorStoreIndex:
    """The pool in an in-memory Chroma collection, through LlamaIndex's ChromaVectorStore."""
    client = chromadb.EphemeralClient(ChromaSettings(anonymized_telemetry=False))
    collection = client.get_or_create_collection("leap-years", metadata={"hnsw:space": "cosine"})
    storage = StorageContext.from_defaults(vector_store=ChromaVectorStore(collection))
    nodes = [TextNode(id_=name, text=code) for name, code in POOL.items()]
    return VectorStoreIndex(nodes, storage_context=storage, embed_model=embed_model)


def show(title: str, nodes: list[NodeWithScore]) -> None:
    print(title)
    for rank, node in enumerate(nodes, start=1):
        verdict = verdict_of(node)
        status = verdict.status.value if verdict else "not checked"
        print(f"  {rank}. {node.node.node_id:<24} score {node.score or 0:.4f}  {status}")


def main() -> int:
    Settings.llm = MockLLM()  # echoes its prompt; LlamaIndex would reach for OpenAI otherwise
    index = build_index(GuardrailMiniLMEmbedding())
    base = index.as_retriever(similarity_top_k=5)
    show(f"plain retriever, {QUERY!r}:", base.retrieve(QUERY))

    with Gate() as gate:
        # The one-line swap: wrap the retriever the engine already uses.
        retriever = GuardedRetriever(base, gate=gate, k=2)
        engine = RetrieverQueryEngine.from_args(retriever)
        response = engine.query(TestedQueryBundle(QUERY, tests=TESTS))

    show("gated retriever (query tests run in the Docker sandbox):", response.source_nodes)
    print("the LLM was shown:")
    print(str(response))
    top = response.source_nodes[0] if response.source_nodes else None
    verdict = verdict_of(top) if top else None
    return 0 if top and verdict and verdict.verified and top.node.node_id == "correct" else 1


if __name__ == "__main__":
    raise SystemExit(main())
