"""Gate the search results of a Chroma collection you already have, through LangChain.

A collection of code written with plain ``chromadb`` (not by guardrail) is opened as a
``langchain_chroma.Chroma`` store, and the store's retriever is wrapped in one line:

    retriever = GuardedRetriever(base=store.as_retriever(), gate=gate)

Tests come from each document's metadata: ``tests`` holds a JSON list of test statements (Chroma
metadata cannot hold lists of strings reliably, so JSON text is what such collections store). Keep
them elsewhere? Pass ``test_provider=lambda query, doc: ...`` to look them up.

By default the script first creates such a collection in a temporary directory: a ``median``
helper, two copies of it with a one-line bug each, and a neighbour. Point it at your own with

    .venv/bin/python examples/gate_existing_chroma_collection.py \\
        --path DIR --collection NAME --query "what the code should do"

(the collection must have been embedded with the bundled MiniLM, as the demo one is).

Runs offline: a local Chroma directory, the bundled MiniLM, the Docker sandbox (run
`scripts/docker-up` first).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import chromadb
from chromadb.config import Settings
from langchain_chroma import Chroma

from guardrail import Gate
from guardrail.index import minilm_embedding
from langchain_guardrail import ChromaEmbeddings, GuardedRetriever, verdict_of

MEDIAN = '''def median(values):
    """Middle value of a list of numbers (mean of the two middle ones for even lengths)."""
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2
'''
MEDIAN_TESTS = [
    "assert median([3, 1, 2]) == 2",
    "assert median([4, 1, 3, 2]) == 2.5",
    "assert median([5]) == 5",
]
MEAN = '''def mean(values):
    """Arithmetic mean of a non-empty list of numbers."""
    return sum(values) / len(values)
'''

# (id, code, tests): what an existing project might have put into its collection.
DEMO = [
    ("stats/median", MEDIAN, MEDIAN_TESTS),
    ("vendored/median", MEDIAN.replace("sorted(values)", "list(values)"), MEDIAN_TESTS),
    (
        "old/median",
        MEDIAN.replace("ordered[mid - 1] + ordered[mid]", "ordered[mid] + ordered[mid + 1]"),
        MEDIAN_TESTS,
    ),
    ("stats/mean", MEAN, ["assert mean([1, 2, 3]) == 2"]),
]
DEMO_QUERY = "median of a list of numbers"


def create_demo_collection(path: Path, name: str) -> None:
    """The 'existing' collection: plain chromadb, code as documents, tests as JSON metadata."""
    client = chromadb.PersistentClient(str(path), settings=Settings(anonymized_telemetry=False))
    collection = client.create_collection(name, configuration={"hnsw": {"space": "cosine"}})
    codes = [code for _, code, _ in DEMO]
    collection.add(
        ids=[id_ for id_, _, _ in DEMO],
        documents=codes,
        embeddings=minilm_embedding()(codes),
        metadatas=[{"source": id_, "tests": json.dumps(tests)} for id_, _, tests in DEMO],
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", type=Path, help="directory of an existing Chroma database")
    parser.add_argument("--collection", default="snippets", help="collection name")
    parser.add_argument("--query", default=DEMO_QUERY)
    args = parser.parse_args(argv)

    with tempfile.TemporaryDirectory() as scratch:
        path = args.path
        if path is None:
            path = Path(scratch)
            create_demo_collection(path, args.collection)
        store = Chroma(
            collection_name=args.collection,
            embedding_function=ChromaEmbeddings(minilm_embedding()),
            client=chromadb.PersistentClient(
                str(path), settings=Settings(anonymized_telemetry=False)
            ),
        )
        old_retriever = store.as_retriever(search_kwargs={"k": 3})
        print(f"query: {args.query}\n\nungated (what the agent would get today):")
        for rank, document in enumerate(old_retriever.invoke(args.query), start=1):
            print(f"  {rank}. {document.id}")

        with Gate() as gate:
            retriever = GuardedRetriever(base=old_retriever, gate=gate, k=3)
            gated = retriever.invoke(args.query)
        print("\ngated:")
        for rank, document in enumerate(gated, start=1):
            verdict = verdict_of(document)
            assert verdict is not None
            detail = (
                f"passed {len(verdict.passed_tests)}/{len(verdict.tests)} tests"
                if verdict.tests
                else verdict.message
            )
            print(f"  {rank}. {document.id}: {verdict.status.value} ({detail})")
        verified = [d for d in gated if (v := verdict_of(d)) is not None and v.verified]
        if not verified:
            print("\nnothing could be verified: no result ran and passed its tests")
            return 1
        print(f"\nuse: {verified[0].id}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
