"""LangChain's own standard retriever tests, subclassed (never forked), with the real Docker gate.

The retriever wraps an ephemeral `CodeIndex` (real Chroma, offline MiniLM) of five correct
functions that carry their own tests, so every candidate is really verified in the sandbox and the
example query has five verified hits (the standard tests ask for exactly 1 and exactly 3).
"""

from __future__ import annotations

from typing import Any

import pytest
from langchain_tests.integration_tests import RetrieversIntegrationTests

from guardrail.gate import Gate
from guardrail.index import CodeIndex
from langchain_guardrail import GuardedRetriever, verdict_of

pytestmark = pytest.mark.docker


class TestGuardedRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _parts(self, gate: Gate, utility_index: CodeIndex) -> None:
        # Autouse fixtures run before the standard `retriever` fixture builds the retriever.
        self._gate = gate
        self._index = utility_index

    @property
    def retriever_constructor(self) -> type[GuardedRetriever]:
        return GuardedRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"base": self._index, "gate": self._gate, "policy": "filter"}

    @property
    def retriever_query_example(self) -> str:
        return "a small utility function over numbers, lists or text"

    def test_example_query_hits_are_all_verified(self) -> None:
        # Not a standard test: shows the standard ones above ran through the real gate.
        retriever = GuardedRetriever(**self.retriever_constructor_params, k=5)
        documents = retriever.invoke(self.retriever_query_example)
        assert len(documents) == 5
        verdicts = [verdict_of(document) for document in documents]
        assert all(v is not None and v.verified and not v.cached for v in verdicts)
        # The tests were the snippets' own, stored in the index.
        assert {d.metadata["guardrail"]["spec_source"] for d in documents} == {"stored"}
