"""`GuardedRetriever` over a real ChromaVectorStore index, judged by the real Docker gate."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest
from llama_index.core import VectorStoreIndex
from llama_index.core.retrievers import VectorIndexRetriever
from llama_index.core.schema import BaseNode, MetadataMode, NodeWithScore, TextNode
from llamaindex_pool import (
    CLAMP_QUERY,
    CLAMP_TESTS,
    CORRECT_ID,
    chroma_index,
    clamp_nodes,
)

from guardrail.cache import VerdictCache
from guardrail.errors import SandboxError, SpecError
from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec
from guardrail.verdict import Status
from llama_index.retrievers.guardrail import (
    METADATA_KEY,
    GuardedRetriever,
    GuardrailMiniLMEmbedding,
    TestedQueryBundle,
    verdict_of,
)

pytestmark = pytest.mark.docker

SLOW_CODE = """import time

def f(x):
    time.sleep(0.3)
    return x + {n}
"""


def _ids(nodes: list[NodeWithScore]) -> list[str]:
    return [node.node.node_id for node in nodes]


def test_gate_puts_the_correct_function_first_where_the_raw_retriever_put_a_clone(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    base = clamp_index.as_retriever(similarity_top_k=6)
    ungated = base.retrieve(CLAMP_QUERY)
    assert len(ungated) == 6
    assert ungated[0].node.node_id != CORRECT_ID, "precondition: MiniLM ranks a buggy clone first"

    retriever = GuardedRetriever(base, gate=gate, fetch_k=6, k=3)
    gated = retriever.retrieve(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS))

    # Every clone fails a test and is dropped; the correct function is all that is left.
    assert _ids(gated) == [CORRECT_ID]
    verdict = gated[0].node.metadata[METADATA_KEY]
    assert verdict["status"] == "verified"
    assert verdict["verified"] is True
    assert verdict["passed_tests"] == CLAMP_TESTS
    assert verdict["spec_source"] == "query"
    assert verdict["policy"] == "rerank"
    assert verdict["retrieval_rank"] == _ids(ungated).index(CORRECT_ID)
    # The raw similarity stays in the verdict; the node's score follows the gate's order.
    assert verdict["retrieval_score"] == pytest.approx(ungated[verdict["retrieval_rank"]].score)
    assert gated[0].score == 1.0


def test_scores_follow_the_gates_order_so_a_resort_keeps_verified_first(
    chroma_client: Any, embed_model: GuardrailMiniLMEmbedding, gate: Gate
) -> None:
    nodes = clamp_nodes()
    for node in nodes:  # only the correct function carries tests: it verifies, clones are
        if node.node_id == CORRECT_ID:  # unverifiable and follow it in retrieval order
            node.metadata["tests"] = json.dumps(CLAMP_TESTS)
    base = chroma_index(chroma_client, embed_model, nodes).as_retriever(similarity_top_k=6)
    gated = GuardedRetriever(base, gate=gate, fetch_k=6, k=6).retrieve(CLAMP_QUERY)

    assert _ids(gated)[0] == CORRECT_ID
    raw = [node.node.metadata[METADATA_KEY]["retrieval_score"] for node in gated]
    assert raw[0] < raw[1], "precondition: a clone is more similar than the correct function"
    scores = [node.score or 0.0 for node in gated]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    # A later step that sorts by score (fusion, a cut-off) keeps the gate's order.
    assert _ids(sorted(gated, key=lambda n: -(n.score or 0.0))) == _ids(gated)


async def test_aretrieve_gives_the_same_answer_and_leaves_the_event_loop_free(
    chroma_client: Any, embed_model: GuardrailMiniLMEmbedding, gate: Gate
) -> None:
    # Each candidate sleeps in the sandbox, so gating takes a while: the loop must keep ticking.
    slow = [TextNode(id_=f"slow-{n}", text=SLOW_CODE.format(n=n)) for n in range(3)]
    index = chroma_index(chroma_client, embed_model, slow)
    retriever = GuardedRetriever(index.as_retriever(similarity_top_k=3), gate=gate, k=3)
    bundle = TestedQueryBundle("add to x", tests=["assert f(1) == 2"])

    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    async def retrieve() -> list[NodeWithScore]:
        try:
            return await retriever.aretrieve(bundle)
        finally:
            done.set()

    started = time.monotonic()
    _, nodes = await asyncio.gather(ticker(), retrieve())
    elapsed = time.monotonic() - started

    assert _ids(nodes) == ["slow-1"]
    assert nodes[0].node.metadata[METADATA_KEY]["status"] == "verified"
    assert elapsed >= 0.3
    assert ticks >= 10, f"the event loop was blocked: {ticks} ticks in {elapsed:.2f}s"
    # The sync path decides the same (from the verdict cache now).
    again = retriever.retrieve(bundle)
    assert _ids(again) == ["slow-1"]
    assert again[0].node.metadata[METADATA_KEY]["cached"] is True


async def test_aretrieve_puts_the_correct_function_first(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    # Given the index itself, the retriever asks it for fetch_k results.
    retriever = GuardedRetriever(clamp_index, gate=gate, fetch_k=6, k=2)
    assert isinstance(retriever.retriever, VectorIndexRetriever)
    assert retriever.retriever.similarity_top_k == 6
    nodes = await retriever.aretrieve(TestedQueryBundle(CLAMP_QUERY, tests=CLAMP_TESTS))
    assert _ids(nodes) == [CORRECT_ID]
    assert nodes[0].node.metadata[METADATA_KEY]["verified"] is True


def test_verdict_metadata_survives_json_serialisation(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    retriever = GuardedRetriever(
        clamp_index.as_retriever(similarity_top_k=6), gate=gate, tests=CLAMP_TESTS
    )
    [node] = retriever.retrieve(CLAMP_QUERY)
    verdict = verdict_of(node)
    assert verdict is not None
    assert verdict.status is Status.VERIFIED

    # NodeWithScore.from_dict cannot rebuild the abstract node type, so rebuild the TextNode.
    loaded = json.loads(json.dumps(node.to_dict()))
    restored = NodeWithScore(node=TextNode.from_dict(loaded["node"]), score=loaded["score"])
    assert restored.node.metadata[METADATA_KEY] == node.node.metadata[METADATA_KEY]
    assert restored.score == node.score
    assert verdict_of(restored) == verdict

    node_json = node.node.to_json()
    restored_node = TextNode.from_json(node_json)
    assert verdict_of(restored_node) == verdict
    assert json.loads(node_json)["metadata"][METADATA_KEY]["tests"][0] == {
        "test": CLAMP_TESTS[0],
        "outcome": "pass",
        "detail": "",
        "fault": None,
        "observed": None,
        "returned": None,
        "shown_by_candidate": False,
    }


def test_verdict_dict_stays_out_of_embedding_and_llm_text_and_inputs_are_not_modified(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    base = clamp_index.as_retriever(similarity_top_k=6)
    retriever = GuardedRetriever(base, gate=gate, tests=CLAMP_TESTS)
    [node] = retriever.retrieve(CLAMP_QUERY)
    inner: BaseNode = node.node
    assert METADATA_KEY in inner.metadata
    for mode in (MetadataMode.LLM, MetadataMode.EMBED):
        text = inner.get_content(metadata_mode=mode)
        assert "def clamp" in text
        assert "verified" not in text
        assert f"{METADATA_KEY}:" not in text
    # The LLM reads the verdict's one line; the embedding does not.
    line = "guardrail_verdict: VERIFIED against the query's tests: passed 5/5"
    assert line in inner.get_content(metadata_mode=MetadataMode.LLM)
    assert "VERIFIED" not in inner.get_content(metadata_mode=MetadataMode.EMBED)
    # The full metadata view still shows it, for programs.
    assert "verified" in inner.get_content(metadata_mode=MetadataMode.ALL)

    raw = {n.node.node_id: n for n in base.retrieve(CLAMP_QUERY)}
    assert METADATA_KEY not in raw[CORRECT_ID].node.metadata


def test_tests_stored_in_node_metadata_are_used(
    chroma_client: Any, embed_model: GuardrailMiniLMEmbedding, gate: Gate
) -> None:
    index = chroma_index(chroma_client, embed_model, clamp_nodes(stored_tests=True))
    retriever = GuardedRetriever(index.as_retriever(similarity_top_k=6), gate=gate)
    nodes = retriever.retrieve(CLAMP_QUERY)
    assert _ids(nodes) == [CORRECT_ID]
    assert nodes[0].node.metadata[METADATA_KEY]["spec_source"] == "stored"


def test_test_provider_gives_tests_per_node(clamp_index: VectorStoreIndex, gate: Gate) -> None:
    seen: list[tuple[str, str]] = []

    def provider(query: str, node: BaseNode) -> list[str]:
        seen.append((query, node.node_id))
        return CLAMP_TESTS

    retriever = GuardedRetriever(
        clamp_index.as_retriever(similarity_top_k=6), gate=gate, test_provider=provider
    )
    nodes = retriever.retrieve(CLAMP_QUERY)
    assert _ids(nodes) == [CORRECT_ID]
    assert nodes[0].node.metadata[METADATA_KEY]["spec_source"] == "provider"
    assert len(seen) == 6
    assert {query for query, _ in seen} == {CLAMP_QUERY}


def test_query_tests_override_the_retriever_tests(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    # The retriever's own tests verify only the correct clamp; the query's looser test (below the
    # range) is also passed by three of the clones, and the query's tests are the ones used.
    retriever = GuardedRetriever(
        clamp_index.as_retriever(similarity_top_k=6), gate=gate, tests=CLAMP_TESTS, k=6
    )
    loose = Spec.build(["assert clamp(-3, 0, 10) == 0"], "clamp")
    nodes = retriever.retrieve(TestedQueryBundle(CLAMP_QUERY, tests=loose))
    verified = [n.node.node_id for n in nodes if n.node.metadata[METADATA_KEY]["verified"]]
    assert CORRECT_ID in verified
    assert len(verified) > 1


def test_policies_filter_and_abstain(clamp_index: VectorStoreIndex, gate: Gate) -> None:
    base = clamp_index.as_retriever(similarity_top_k=6)
    impossible = TestedQueryBundle(CLAMP_QUERY, tests=["assert clamp(5, 0, 10) == 'five'"])
    assert GuardedRetriever(base, gate=gate, policy="abstain").retrieve(impossible) == []

    # Without tests nothing is verifiable: rerank hands everything over labelled, filter nothing.
    rerank = GuardedRetriever(base, gate=gate, policy="rerank", k=6).retrieve(CLAMP_QUERY)
    assert len(rerank) == 6
    assert {n.node.metadata[METADATA_KEY]["status"] for n in rerank} == {"unverifiable"}
    assert {n.node.metadata[METADATA_KEY]["spec_source"] for n in rerank} == {"none"}
    assert GuardedRetriever(base, gate=gate, policy="filter").retrieve(CLAMP_QUERY) == []


def test_fetch_k_limits_what_is_verified(clamp_index: VectorStoreIndex, gate: Gate) -> None:
    base = clamp_index.as_retriever(similarity_top_k=6)
    correct_rank = _ids(base.retrieve(CLAMP_QUERY)).index(CORRECT_ID)
    assert correct_rank >= 1, "precondition: a clone outranks the correct function"
    retriever = GuardedRetriever(base, gate=gate, fetch_k=correct_rank, k=1, tests=CLAMP_TESTS)
    # The correct function is beyond fetch_k; every clone within it fails: nothing to hand over.
    assert retriever.retrieve(CLAMP_QUERY) == []


def test_bad_query_tests_raise_before_anything_runs(
    clamp_index: VectorStoreIndex, gate: Gate
) -> None:
    retriever = GuardedRetriever(clamp_index.as_retriever(similarity_top_k=6), gate=gate)
    with pytest.raises(SpecError, match="does not parse"):
        retriever.retrieve(TestedQueryBundle(CLAMP_QUERY, tests=["assert clamp(1, 0, 2 == 1"]))
    assert gate.cache is not None
    assert gate.cache.misses == 0


async def test_a_sandbox_that_cannot_run_raises_and_hands_nothing_over(
    clamp_index: VectorStoreIndex, tmp_path: Path
) -> None:
    # A real engine asked for an image that does not exist (or no engine at all): fail closed.
    sandbox = DockerSandbox(image="guardrail-sandbox:no-such-image", pool_size=1)
    with Gate(sandbox, cache=VerdictCache(tmp_path / "verdicts.sqlite")) as broken:
        retriever = GuardedRetriever(clamp_index, gate=broken, fetch_k=6, tests=CLAMP_TESTS)
        with pytest.raises(SandboxError):
            retriever.retrieve(CLAMP_QUERY)
        with pytest.raises(SandboxError):
            await retriever.aretrieve(CLAMP_QUERY)
        assert broken.cache is not None
        assert broken.cache.hits == 0
