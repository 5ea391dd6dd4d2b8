"""The public surface and the checks that run before anything is retrieved or executed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from llama_index.core.retrievers import BaseRetriever
from pydantic import ValidationError

import llama_index.retrievers.guardrail as package
from guardrail.gate import Gate
from llama_index.retrievers.guardrail import (
    ExecutionGatePostprocessor,
    GuardedRetriever,
    GuardrailMiniLMEmbedding,
    TestedQueryBundle,
)

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def test_public_api_is_pinned() -> None:
    assert sorted(package.__all__) == [
        "ExecutionGatePostprocessor",
        "GuardedQueryEngine",
        "GuardedRetriever",
        "GuardrailMiniLMEmbedding",
        "METADATA_KEY",
        "SpecSource",
        "TestedQueryBundle",
        "VERDICT_TEXT_KEY",
        "verdict_of",
    ]
    assert package.METADATA_KEY == "guardrail"
    assert package.SpecSource.PROVIDER.value == "provider"  # spec_source of test_provider tests


def test_namespace_package_leaves_llama_index_core_importable() -> None:
    import llama_index.core
    import llama_index.vector_stores.chroma

    assert llama_index.core.__file__ is not None
    assert llama_index.vector_stores.chroma.ChromaVectorStore.class_name() == "ChromaVectorStore"
    installed = Path(str(package.__file__)).parent
    assert installed.parts[-3:] == ("llama_index", "retrievers", "guardrail")
    # Shared namespaces: an __init__.py here would hide every other LlamaIndex integration.
    assert not (installed.parents[0] / "__init__.py").exists()
    assert not (installed.parents[1] / "__init__.py").exists()
    assert not (PACKAGE_ROOT / "llama_index" / "__init__.py").exists()
    assert not (PACKAGE_ROOT / "llama_index" / "retrievers" / "__init__.py").exists()


class _ListRetriever(BaseRetriever):
    """A real LlamaIndex retriever that returns nothing (only construction is under test)."""

    def _retrieve(self, query_bundle: object) -> list[object]:  # type: ignore[override]
        return []


def test_retriever_rejects_unknown_arguments(idle_gate: Gate) -> None:
    with pytest.raises(TypeError, match="fetchk"):
        GuardedRetriever(_ListRetriever(), gate=idle_gate, fetchk=5)  # type: ignore[call-arg]


def test_retriever_rejects_a_base_that_is_not_a_retriever(idle_gate: Gate) -> None:
    with pytest.raises(TypeError, match=r"as_retriever\(\)"):
        GuardedRetriever(object(), gate=idle_gate)  # type: ignore[arg-type]


@pytest.mark.parametrize(("k", "fetch_k"), [(0, 10), (5, 4)])
def test_retriever_rejects_k_above_fetch_k_or_below_one(
    idle_gate: Gate, k: int, fetch_k: int
) -> None:
    with pytest.raises(ValueError, match=f"k={k}, fetch_k={fetch_k}"):
        GuardedRetriever(_ListRetriever(), gate=idle_gate, k=k, fetch_k=fetch_k)


def test_retriever_rejects_one_test_given_as_a_string(idle_gate: Gate) -> None:
    with pytest.raises(TypeError, match="wrap it in a list"):
        GuardedRetriever(_ListRetriever(), gate=idle_gate, tests="assert f(1) == 2")


def test_retriever_rejects_an_unknown_policy(idle_gate: Gate) -> None:
    with pytest.raises(ValueError, match="'best'"):
        GuardedRetriever(_ListRetriever(), gate=idle_gate, policy="best")


def test_postprocessor_rejects_unknown_fields(idle_gate: Gate) -> None:
    with pytest.raises(ValidationError, match="top_k"):
        ExecutionGatePostprocessor(gate=idle_gate, top_k=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError, match="top_n"):
        ExecutionGatePostprocessor(gate=idle_gate, top_n=0)


def test_postprocessor_serialises_without_the_gate(idle_gate: Gate) -> None:
    processor = ExecutionGatePostprocessor(gate=idle_gate, tests=["assert f(1) == 2"], top_n=2)
    data = processor.to_dict()
    assert data["class_name"] == "ExecutionGatePostprocessor"
    assert data["tests"] == ["assert f(1) == 2"]
    assert data["top_n"] == 2
    assert "gate" not in data


def test_tested_query_bundle_is_a_query_bundle_with_keyword_only_tests() -> None:
    bundle = TestedQueryBundle("sort a list", tests=["assert f([2, 1]) == [1, 2]"])
    assert str(bundle) == "sort a list"
    assert bundle.embedding_strs == ["sort a list"]
    assert bundle.tests == ["assert f([2, 1]) == [1, 2]"]
    with pytest.raises(TypeError):
        TestedQueryBundle("q", None, None, None, ["assert f(1)"])  # type: ignore[call-arg]
    with pytest.raises(TypeError, match="wrap it in a list"):
        TestedQueryBundle("q", tests="assert f(1) == 2")


def test_minilm_embedding_is_offline_and_384_dimensional(
    embed_model: GuardrailMiniLMEmbedding, minilm: Any
) -> None:
    query = embed_model.get_query_embedding("add two numbers")
    texts = embed_model.get_text_embedding_batch(["def add(a, b): return a + b", "x = 1"])
    assert len(query) == 384
    assert [len(vector) for vector in texts] == [384, 384]
    assert all(isinstance(value, float) for value in query)
    # Unit-normalised vectors: the cosine of the query with itself is 1.
    assert sum(value * value for value in query) == pytest.approx(1.0, abs=1e-4)
    assert embed_model.model_name == minilm.model_name  # the bundled model's local path
