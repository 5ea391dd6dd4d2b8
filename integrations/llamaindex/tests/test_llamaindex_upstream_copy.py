"""`GuardedQueryEngine._query` / `_aquery` are llama-index-core's own, plus one branch (answer
from the failures when no node is kept): pinned here, so a change upstream is reviewed, not missed.

When llama-index-core changes these methods, this fails: compare the new source with
`llama_index.retrievers.guardrail.query_engine`, carry the change over, and update the hashes.
"""

from __future__ import annotations

import hashlib
import inspect

import pytest
from llama_index.core.query_engine import RetrieverQueryEngine

PINNED = {  # llama-index-core 0.14.25
    "_query": "9b566c4f5423229922e0265cfeff584a6e25e997bc77a5d1875cfa9cab1b5a87",
    "_aquery": "f212f3937425e9173c5b9ef74ce3749ddcf873b5e0aa3a796959ae724e7e16f3",
}


@pytest.mark.parametrize("name", sorted(PINNED))
def test_the_copied_query_methods_still_match_llama_index_core(name: str) -> None:
    source = inspect.getsource(getattr(RetrieverQueryEngine, name))
    assert hashlib.sha256(source.encode()).hexdigest() == PINNED[name], (
        f"RetrieverQueryEngine.{name} changed upstream: review GuardedQueryEngine.{name}"
    )
