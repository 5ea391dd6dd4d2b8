"""`CustomSystem`: a user's own LangChain or LlamaIndex retriever as an eval system.

Real parts: the fixture factories (`fixtures/retrievers/user_retrievers.py`) build real Chroma
stores embedded by the offline MiniLM, and retrieve over the release fixture pool. No sandbox is
needed here (the eval's runs with the gate are in `test_audit_retriever.py`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from langchain_core.documents import Document
from llama_index.core.schema import MetadataMode, TextNode

from guardrail.index import SentenceTransformerEmbedding
from guardrail_eval.custom import (
    CustomSystem,
    Factory,
    Framework,
    load_factory,
    opaque_document_id,
)
from guardrail_eval.errors import EvalSettingError, RetrieverError
from guardrail_eval.pool import Pool, load_pool
from guardrail_eval.systems import DenseSystem

FIXTURES = Path(__file__).parent / "fixtures"
FACTORIES = FIXTURES / "retrievers"
DEPTH = 10


@pytest.fixture(autouse=True)
def factories_on_path(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(FACTORIES))


@pytest.fixture(scope="module")
def pool() -> Pool:
    return load_pool(FIXTURES / "release")


@pytest.fixture(scope="module")
def dense_rankings(pool: Pool, minilm: SentenceTransformerEmbedding) -> dict[str, list[str]]:
    dense = DenseSystem(minilm)
    dense.prepare(pool)
    return {
        query.query_id: [item.corpus_id for item in dense.retrieve(pool, query, DEPTH).ranking]
        for query in pool.queries
    }


def _prepared(spec: str, pool: Pool) -> CustomSystem:
    system = CustomSystem(load_factory(spec), k=DEPTH)
    system.prepare(pool)
    return system


@pytest.mark.parametrize(
    ("spec", "framework"),
    [
        ("user_retrievers:langchain_chroma", Framework.LANGCHAIN),
        ("user_retrievers:llamaindex_chroma", Framework.LLAMAINDEX),
    ],
)
def test_same_embedding_ranks_as_the_dense_system(
    spec: str,
    framework: Framework,
    pool: Pool,
    minilm: SentenceTransformerEmbedding,
    dense_rankings: dict[str, list[str]],
) -> None:
    system = _prepared(spec, pool)
    assert system.factory.framework is framework  # read from the annotations
    assert system.name == spec.partition(":")[2]
    for query in pool.queries:
        retrieval = system.retrieve(pool, query, DEPTH)
        assert [item.corpus_id for item in retrieval.ranking] == dense_rankings[query.query_id]
        assert retrieval.snippet_scores is None  # a top-k retriever does not score the pool
        scores = [item.score for item in retrieval.ranking]
        if framework is Framework.LLAMAINDEX:  # NodeWithScore carries the store's similarity
            assert all(0 < s <= 1 for s in scores) and scores == sorted(scores, reverse=True)
        else:  # as_retriever() hands over documents without scores
            assert set(scores) == {0.0}


def test_a_shorter_depth_cuts_the_ranking(pool: Pool) -> None:
    system = _prepared("user_retrievers:langchain_chroma", pool)
    assert len(system.retrieve(pool, pool.queries[0], 3).ranking) == 3
    assert system.shortfall is None


def test_a_retriever_returning_fewer_than_k_is_noticed(pool: Pool) -> None:
    system = _prepared("user_retrievers:ignores_k", pool)
    assert len(system.retrieve(pool, pool.queries[0], DEPTH).ranking) == 4
    assert system.shortfall == ("q_0001", 4, DEPTH)


def test_documents_are_the_code_and_carry_only_their_corpus_id(pool: Pool) -> None:
    seen: dict[Framework, list[Any]] = {}

    def capture(framework: Framework) -> Factory:
        def factory(documents: list[Any], k: int) -> Any:
            seen[framework] = documents
            assert k == DEPTH
            raise RuntimeError("captured")

        return Factory(f"test:{framework.value}", factory, framework)

    for framework in Framework:
        with pytest.raises(RetrieverError, match="raised RuntimeError: captured"):
            CustomSystem(capture(framework), k=DEPTH).prepare(pool)
    langchain, llamaindex = seen[Framework.LANGCHAIN], seen[Framework.LLAMAINDEX]
    # Opaque ids, in their own order: neither shape nor order shows a canonical (c_0001 is
    # q_0001's, listed before its mutants in the pool) or a mutant.
    back = {opaque_document_id(pool, cid): cid for cid in pool.corpus}
    assert [d.id for d in langchain] == [n.node_id for n in llamaindex] == sorted(back)
    assert [back[str(d.id)] for d in langchain] != list(pool.corpus)
    assert all(re.fullmatch(r"d_[0-9a-f]{16}", str(d.id)) for d in langchain)
    for document, node in zip(langchain, llamaindex, strict=True):
        assert isinstance(document, Document) and isinstance(node, TextNode)
        code = pool.corpus[back[str(document.id)]].code
        assert document.page_content == code and document.metadata == {"corpus_id": document.id}
        assert node.metadata == {"corpus_id": node.node_id}
        # LlamaIndex embeds metadata with the text unless told not to: only the code is embedded.
        assert node.get_content(metadata_mode=MetadataMode.EMBED) == code
        assert node.get_content(metadata_mode=MetadataMode.LLM) == code


def test_chunks_of_one_snippet_count_at_their_best_rank(pool: Pool) -> None:
    system = _prepared("user_retrievers:chunked", pool)
    ranking = system.retrieve(pool, pool.queries[0], DEPTH).ranking
    back = {opaque_document_id(pool, cid): cid for cid in pool.corpus}
    first_three = [back[did] for did in sorted(back)[:3]]  # the first three documents given
    assert [item.corpus_id for item in ranking] == first_three
    assert [item.score for item in ranking] == [1.0, 0.99, 0.98]  # metadata["score"]


@pytest.mark.parametrize(
    ("factory", "message"),
    [
        (
            "forgets_metadata",
            "result 1 of --retriever 'user_retrievers:forgets_metadata' for query 'q_0001' has"
            " no metadata 'corpus_id'",
        ),
        (
            "foreign_ids",
            "result 2 of --retriever 'user_retrievers:foreign_ids' for query 'q_0001' names"
            " corpus id 'from-another-index', which is not a document of pool 'release'",
        ),
        (
            "fails_on_whitespace",
            "the retriever of --retriever 'user_retrievers:fails_on_whitespace' raised"
            " TimeoutError: reranker timed out on query 'q_0001'",
        ),
    ],
)
def test_unusable_results_are_errors_naming_the_factory_and_query(
    factory: str, message: str, pool: Pool
) -> None:
    system = _prepared(f"user_retrievers:{factory}", pool)
    with pytest.raises(RetrieverError) as caught:
        system.retrieve(pool, pool.queries[0], DEPTH)
    assert message in str(caught.value)


def test_a_factory_that_raises_is_named_with_its_exception(pool: Pool) -> None:
    system = CustomSystem(load_factory("user_retrievers:raising"), k=DEPTH)
    with pytest.raises(RetrieverError) as caught:
        system.prepare(pool)
    assert str(caught.value) == (
        "--retriever 'user_retrievers:raising' raised ConnectionError: embedding service"
        " unreachable: https://embeddings.example/v1 while building the retriever over 14"
        " documents"
    )
    assert isinstance(caught.value.__cause__, ConnectionError)


def test_a_vector_store_is_not_a_retriever(pool: Pool) -> None:
    system = CustomSystem(load_factory("user_retrievers:store_not_retriever"), k=DEPTH)
    with pytest.raises(RetrieverError) as caught:
        system.prepare(pool)
    assert "returned a langchain_chroma.vectorstores.Chroma, not a" in str(caught.value)
    assert "langchain_core.retrievers.BaseRetriever" in str(caught.value)
    assert "as_retriever" in caught.value.hint


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("user_retrievers", "expected module:factory, such as my_pipeline:make_retriever"),
        ("user_retrievers:", "expected module:factory"),
        ("user retrievers:x", "expected module:factory"),
        ("no_such_module_here:make", "no module named 'no_such_module_here'"),
        ("user_retrievers:missing", "user_retrievers.py has no attribute 'missing'"),
        ("user_retrievers:NOT_CALLABLE", "is a int, not a callable factory"),
        ("user_retrievers:one_argument", "cannot be called as factory(documents, k)"),
        ("broken_retrievers:make", "importing broken_retrievers raised KeyError"),
        ("user_retrievers:unannotated", "cannot tell whether it builds a LangChain or"),
    ],
)
def test_bad_specs_say_what_is_wrong(spec: str, message: str) -> None:
    with pytest.raises(RetrieverError) as caught:
        load_factory(spec)
    assert message in str(caught.value)


def test_framework_given_for_an_unannotated_factory(pool: Pool) -> None:
    factory = load_factory("user_retrievers:unannotated", Framework.LANGCHAIN)
    system = CustomSystem(factory, k=DEPTH)
    system.prepare(pool)
    assert len(system.retrieve(pool, pool.queries[0], DEPTH).ranking) == DEPTH


def test_names_must_be_usable_as_file_names() -> None:
    factory = load_factory("user_retrievers:langchain_chroma")
    with pytest.raises(EvalSettingError, match="letters, digits"):
        CustomSystem(factory, k=DEPTH, name="../escape")
