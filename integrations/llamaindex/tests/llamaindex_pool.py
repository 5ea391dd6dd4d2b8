"""The near-clone pool shared by the LlamaIndex tests and how to index it in Chroma.

The pool is one correct ``clamp`` and five single-line clones of it, each buggy (every clone
passes at least one of `CLAMP_TESTS` and fails at least one). Embedded with the real MiniLM, the
ungated retriever ranks a buggy clone above the correct function for `CLAMP_QUERY`; the tests
assert that precondition rather than assume it.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

from llama_index.core import StorageContext, VectorStoreIndex
from llama_index.core.schema import TextNode
from llama_index.vector_stores.chroma import ChromaVectorStore

from llama_index.retrievers.guardrail import GuardrailMiniLMEmbedding

CLAMP = '''def clamp(value, low, high):
    """Limit value to the closed range [low, high]."""
    if value < low:
        return low
    if value > high:
        return high
    return value
'''

CLAMP_CLONES = {
    "clamp-wrong-comparison-low": CLAMP.replace("if value < low", "if value > low"),
    "clamp-wrong-comparison-high": CLAMP.replace("if value > high", "if value < high"),
    "clamp-returns-low-for-high": CLAMP.replace("        return high", "        return low"),
    "clamp-off-by-one": CLAMP.replace("    return value\n", "    return value + 1\n"),
    "clamp-returns-high-for-low": CLAMP.replace(
        "        return low\n    if", "        return high\n    if"
    ),
}

CORRECT_ID = "clamp-correct"

CLAMP_TESTS = [
    "assert clamp(5, 0, 10) == 5",
    "assert clamp(-3, 0, 10) == 0",
    "assert clamp(42, 0, 10) == 10",
    "assert clamp(0, 0, 10) == 0",
    "assert clamp(10, 0, 10) == 10",
]

CLAMP_QUERY = "clamp a value to the range low..high"


def clamp_nodes(*, stored_tests: bool = False) -> list[TextNode]:
    """The pool as LlamaIndex nodes; with ``stored_tests`` each carries the tests (JSON, flat)."""
    sources = {CORRECT_ID: CLAMP, **CLAMP_CLONES}
    metadata: dict[str, Any] = {"entry_point": "clamp"}
    if stored_tests:
        metadata["tests"] = json.dumps(CLAMP_TESTS)
    return [
        TextNode(
            id_=node_id,
            text=code,
            metadata=dict(metadata),
            # Only the code is embedded, as a code index would.
            excluded_embed_metadata_keys=list(metadata),
        )
        for node_id, code in sources.items()
    ]


def chroma_index(
    client: Any, embed_model: GuardrailMiniLMEmbedding, nodes: list[TextNode]
) -> VectorStoreIndex:
    """A `VectorStoreIndex` on a fresh `ChromaVectorStore` collection of ``client``."""
    collection = client.create_collection(
        f"li-{uuid.uuid4().hex[:12]}", metadata={"hnsw:space": "cosine"}
    )
    store = ChromaVectorStore(chroma_collection=collection)
    storage = StorageContext.from_defaults(vector_store=store)
    return VectorStoreIndex(nodes, storage_context=storage, embed_model=embed_model)
