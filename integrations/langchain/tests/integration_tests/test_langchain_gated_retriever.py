"""`GuardedRetriever` over a real `CodeIndex` (Chroma + offline MiniLM) and the real Docker gate."""

from __future__ import annotations

import asyncio
import json

import pytest
from langchain_core.documents import Document
from langchain_core.load import dumpd, dumps, load, loads
from langchain_pool import CHUNK, LEAP, NEAR_CLONE_TASKS, Task

from guardrail.gate import Gate
from guardrail.index import CodeIndex
from guardrail.verdict import Status, Verdict
from langchain_guardrail import METADATA_KEY, GuardedRetriever, verdict_of

pytestmark = pytest.mark.docker


def _verdict(document: Document) -> Verdict:
    verdict = verdict_of(document)
    assert verdict is not None
    return verdict


@pytest.mark.parametrize("task", NEAR_CLONE_TASKS, ids=lambda task: task.entry_point)
def test_gate_puts_the_correct_function_first_where_the_ungated_top_is_a_clone(
    near_clone_index: CodeIndex, gate: Gate, task: Task
) -> None:
    ungated = near_clone_index.search(task.query, k=10)
    assert ungated[0].metadata["qualified_name"] in task.clones  # the failure the gate fixes
    canonical_rank = next(i for i, c in enumerate(ungated) if c.code == task.canonical)

    documents = GuardedRetriever(base=near_clone_index, gate=gate).invoke(
        task.query, tests=list(task.tests)
    )

    assert [d.page_content for d in documents] == [task.canonical]  # every clone failed: dropped
    meta = documents[0].metadata[METADATA_KEY]
    assert meta["status"] == "verified"
    assert meta["passed_tests"] == list(task.tests)
    assert meta["failed_tests"] == []
    assert meta["spec_source"] == "query"
    assert meta["retrieval_rank"] == canonical_rank > 0
    assert meta["retrieval_score"] == pytest.approx(ungated[canonical_rank].score)
    assert meta["policy"] == "rerank"
    assert documents[0].metadata["qualified_name"] == task.entry_point  # snippet metadata kept


async def test_ainvoke_verifies_without_blocking_the_event_loop(
    near_clone_index: CodeIndex, gate: Gate
) -> None:
    retriever = GuardedRetriever(base=near_clone_index, gate=gate)
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            await asyncio.sleep(0.001)
            ticks += 1

    async def both() -> list[list[Document]]:
        try:
            return list(
                await asyncio.gather(
                    *(retriever.ainvoke(t.query, tests=list(t.tests)) for t in NEAR_CLONE_TASKS)
                )
            )
        finally:
            done.set()

    results, _ = await asyncio.gather(both(), ticker())
    assert [[d.page_content for d in docs] for docs in results] == [
        [t.canonical] for t in NEAR_CLONE_TASKS
    ]
    assert all(_verdict(docs[0]).verified and not _verdict(docs[0]).cached for docs in results)
    assert ticks >= 3, "the event loop was blocked while candidates were verified"
    # The same call again is answered from the verdict cache, through the same async path.
    again = await retriever.ainvoke(LEAP.query, tests=list(LEAP.tests))
    assert _verdict(again[0]).cached


# langchain_core marks `load`/`loads` as beta; the warning is about the API, not about our data.
@pytest.mark.filterwarnings("ignore::langchain_core._api.beta_decorator.LangChainBetaWarning")
def test_verdicts_survive_json_and_langchain_serialisation(
    near_clone_index: CodeIndex, gate: Gate
) -> None:
    retriever = GuardedRetriever(base=near_clone_index, gate=gate, k=3)
    documents = retriever.invoke(CHUNK.query, tests=list(CHUNK.tests))
    documents += retriever.invoke(LEAP.query)  # unverifiable ones, too
    assert {_verdict(d).status for d in documents} == {Status.VERIFIED, Status.UNVERIFIABLE}

    for document in documents:
        meta = document.metadata
        assert json.loads(json.dumps(meta)) == meta
        assert loads(dumps(document), allowed_objects=[Document]) == document
        assert load(dumpd(document), allowed_objects=[Document]) == document
        restored = verdict_of(Document.model_validate_json(document.model_dump_json()))
        assert restored == _verdict(document)


def test_without_tests_candidates_are_unverifiable_in_retrieval_order(
    near_clone_index: CodeIndex, gate: Gate
) -> None:
    ungated = near_clone_index.search(LEAP.query, k=4)
    documents = GuardedRetriever(base=near_clone_index, gate=gate).invoke(LEAP.query)
    assert [d.page_content for d in documents] == [c.code for c in ungated]
    for rank, document in enumerate(documents):
        meta = document.metadata[METADATA_KEY]
        assert (meta["status"], meta["reason"], meta["spec_source"]) == (
            "unverifiable",
            "no_tests",
            "none",
        )
        assert meta["retrieval_rank"] == rank
    # Nothing verified: `filter` and `abstain` hand over nothing at all.
    for policy in ("filter", "abstain"):
        assert (
            GuardedRetriever(base=near_clone_index, gate=gate, policy=policy).invoke(LEAP.query)
            == []
        )


def test_call_tests_override_field_tests_and_k_is_per_call(
    near_clone_index: CodeIndex, gate: Gate
) -> None:
    retriever = GuardedRetriever(base=near_clone_index, gate=gate, tests=list(CHUNK.tests), k=1)
    assert [d.page_content for d in retriever.invoke(CHUNK.query)] == [CHUNK.canonical]
    # The field's chunk tests would fail every leap-year function; the call's tests win.
    documents = retriever.invoke(LEAP.query, tests=list(LEAP.tests))
    assert [d.page_content for d in documents] == [LEAP.canonical]
    # The field's tests decide whatever the query: they find the chunk function among the leap
    # query's ten candidates, and every leap-year function fails them.
    assert [d.page_content for d in retriever.invoke(LEAP.query)] == [CHUNK.canonical]
    # tests=[] turns the field's tests off for one call; k and policy are per call, too.
    wide = retriever.invoke(LEAP.query, tests=[], k=3)
    assert [_verdict(d).status for d in wide] == [Status.UNVERIFIABLE] * 3
    assert retriever.invoke(LEAP.query, tests=[], k=3, policy="filter") == []


def test_test_provider_supplies_tests_per_document(near_clone_index: CodeIndex, gate: Gate) -> None:
    seen: list[tuple[str, str]] = []

    def provider(query: str, document: Document) -> list[str] | None:
        seen.append((query, document.metadata["qualified_name"]))
        # Only the leap-year functions have tests here; the rest stay unverifiable.
        return list(LEAP.tests) if "leap" in document.metadata["qualified_name"] else None

    retriever = GuardedRetriever(base=near_clone_index, gate=gate, test_provider=provider, k=10)
    documents = retriever.invoke(LEAP.query)
    assert documents[0].page_content == LEAP.canonical
    assert documents[0].metadata[METADATA_KEY]["spec_source"] == "provider"
    rest = [d.metadata[METADATA_KEY] for d in documents[1:]]
    assert rest and all(m["status"] == "unverifiable" and m["spec_source"] == "none" for m in rest)
    assert not any("leap" in d.metadata["qualified_name"] for d in documents[1:])  # clones dropped
    assert len(seen) == near_clone_index.count() and {q for q, _ in seen} == {LEAP.query}
