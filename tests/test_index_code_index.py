"""`CodeIndex` over real Chroma (ephemeral and persistent) with the real offline MiniLM."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from pathlib import Path

import pytest

from guardrail.gate import Gate
from guardrail.index import (
    ChromaUnavailableError,
    CodeIndex,
    CodeIndexError,
    CollectionNameError,
    SentenceTransformerEmbedding,
    Snippet,
    split_python_file,
    split_tree,
)
from guardrail.sources import SpecSource, resolve
from guardrail.verdict import Status

CODEBASE = Path(__file__).parent / "snippets" / "codebase"


def _name() -> str:
    """Ephemeral clients share one in-memory database per process: one collection per test."""
    return f"t-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="module")
def pocket(minilm: SentenceTransformerEmbedding) -> CodeIndex:
    index = CodeIndex(_name(), ephemeral=True, embedding_function=minilm)
    index.replace_files(split_tree(CODEBASE).files)
    return index


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("check whether a year is a leap year", "is_leap_year"),
        ("turn a title into a url slug", "slugify"),
        ("greatest common divisor of two numbers", "gcd"),
        ("find the position of a value in a sorted list", "binary_search"),
        ("do two rectangles overlap", "Rect.intersects"),
    ],
)
def test_natural_queries_find_the_right_function(
    pocket: CodeIndex, query: str, expected: str
) -> None:
    top = pocket.search(query, k=3)
    assert top[0].metadata["qualified_name"] == expected
    assert top[0].score is not None and 0.3 < top[0].score <= 1.0
    assert [c.score for c in top] == sorted((c.score or 0.0 for c in top), reverse=True)


def test_search_returns_decoded_metadata_and_code(pocket: CodeIndex) -> None:
    (leap,) = pocket.search("leap year", k=1)
    assert leap.code.startswith("def is_leap_year(year: int) -> bool:")
    assert leap.metadata["tests"] == [
        "__doctest_example__('is_leap_year(2024)', 'True')",
        "__doctest_example__('is_leap_year(1900)', 'False')",
        "__doctest_example__('is_leap_year(2000)', 'True')",
    ]
    # Where it lives, as its module context (guardrail.context): relative file, module, root.
    assert leap.metadata["file"] == "pocketlib/dates.py"
    assert leap.metadata["module"] == "pocketlib.dates"
    assert leap.metadata["root"] == str(CODEBASE.resolve())
    assert (leap.metadata["start_line"], leap.metadata["end_line"]) == (8, 18)
    assert leap.metadata["signature"] == "def is_leap_year(year: int) -> bool"
    assert leap.metadata["tests_source"] == "doctest"
    assert pocket.get([leap.id])[0].tests == leap.metadata["tests"]


def test_where_filter_and_async_search_share_the_implementation(pocket: CodeIndex) -> None:
    text_file = "pocketlib/text.py"
    only_text = pocket.search("number of days in a month", k=3, where={"file": text_file})
    assert {c.metadata["file"] for c in only_text} == {text_file}
    sync = pocket.search("split a list into chunks", k=4)
    asynchronous = asyncio.run(pocket.asearch("split a list into chunks", k=4))
    assert [c.id for c in asynchronous] == [c.id for c in sync]


def test_readding_the_same_snippets_is_a_no_op(pocket: CodeIndex) -> None:
    calls: list[tuple[int, int]] = []
    snippets = split_tree(CODEBASE).snippets
    again = pocket.add(snippets, on_progress=lambda done, total: calls.append((done, total)))
    assert (again.added, again.updated, again.unchanged) == (0, 0, 25)
    assert calls == []  # nothing embedded, nothing written
    assert pocket.count() == 25


def test_batches_report_progress(minilm: SentenceTransformerEmbedding) -> None:
    index = CodeIndex(_name(), ephemeral=True, embedding_function=minilm, batch_size=2)
    snippets = [Snippet(code=f"def f{n}():\n    return {n}\n") for n in range(5)]
    calls: list[tuple[int, int]] = []
    report = index.add(snippets, on_progress=lambda d, t: calls.append((d, t)))
    assert calls == [(0, 5), (2, 5), (4, 5), (5, 5)]  # the clock starts before the first
    assert (report.added, index.count()) == (5, 5)


def test_a_changed_file_replaces_its_old_snippets(
    minilm: SentenceTransformerEmbedding, tmp_path: Path
) -> None:
    module = tmp_path / "calc.py"
    module.write_text("def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n")
    index = CodeIndex(_name(), ephemeral=True, embedding_function=minilm)
    assert index.replace_file(module.resolve(), split_python_file(module)).added == 2
    module.write_text(
        "def add(a, b):\n    return a + b\n\n\n"
        "def multiply(a, b):\n    '''Product of two numbers.'''\n    return a * b\n"
    )
    report = index.replace_file(module.resolve(), split_python_file(module))
    assert (report.added, report.unchanged, report.removed) == (1, 1, 1)
    names = sorted(c.metadata["qualified_name"] for c in index.search("arithmetic", k=10))
    assert names == ["add", "multiply"]
    assert index.replace_file(module.resolve(), []).removed == 2
    assert index.count() == 0


def test_snippets_must_name_the_file_they_replace(minilm: SentenceTransformerEmbedding) -> None:
    index = CodeIndex(_name(), ephemeral=True, embedding_function=minilm)
    stray = Snippet(code="def f():\n    return 1\n", file="/elsewhere.py")
    with pytest.raises(ValueError, match="name other files"):
        index.replace_file("/here.py", [stray])


def test_explicit_ids_are_updated_in_place(minilm: SentenceTransformerEmbedding) -> None:
    index = CodeIndex(_name(), ephemeral=True, embedding_function=minilm)
    old = Snippet(id="pool-1", code="def f(x):\n    return x + 1\n", entry_point="f")
    new = old.model_copy(update={"code": "def f(x):\n    return x + 2\n"})
    index.add([old])
    report = index.add([new, new])  # a repeat inside one call counts once
    assert (report.added, report.updated, report.unchanged) == (0, 1, 0)
    assert [s.code for s in index.get(["pool-1", "missing"])] == [new.code]
    with pytest.raises(ValueError, match="two different snippets share the id 'pool-1'"):
        index.add([old, new])


def test_persistent_index_survives_reopening(
    minilm: SentenceTransformerEmbedding, tmp_path: Path
) -> None:
    shutil.copy(CODEBASE / "pocketlib" / "dates.py", tmp_path / "dates.py")
    first = CodeIndex("pocket", path=tmp_path / "index", embedding_function=minilm)
    assert first.replace_files(split_tree(tmp_path / "dates.py").files).added == 4
    reopened = CodeIndex("pocket", path=tmp_path / "index", embedding_function=minilm)
    assert reopened.count() == 4
    assert reopened.search("leap year", k=1)[0].metadata["qualified_name"] == "is_leap_year"
    assert reopened.replace_files(split_tree(tmp_path / "dates.py").files).unchanged == 4


def test_default_location_comes_from_the_environment(
    minilm: SentenceTransformerEmbedding, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GUARDRAIL_CHROMA_URL", raising=False)
    monkeypatch.setenv("GUARDRAIL_INDEX_DIR", str(tmp_path / "from-env"))
    index = CodeIndex("envtest", embedding_function=minilm)
    assert index.location == str(tmp_path / "from-env")
    assert (tmp_path / "from-env" / "chroma.sqlite3").exists()


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"collection": "a"}, CollectionNameError, "collection name 'a' is not one Chroma"),
        ({"url": "ftp://host:1"}, CodeIndexError, "not a Chroma server URL"),
        ({"url": "http://127.0.0.1:9"}, ChromaUnavailableError, "no Chroma server answers"),
        ({"url": "http://x:1", "ephemeral": True}, ValueError, "at most one of"),
    ],
)
def test_bad_locations_are_typed_errors(
    minilm: SentenceTransformerEmbedding, kwargs: dict[str, object], error: type, message: str
) -> None:
    options: dict[str, object] = {"collection": "guardrail", "ephemeral": "url" not in kwargs}
    options.update(kwargs)
    with pytest.raises(error, match=message):
        CodeIndex(embedding_function=minilm, **options)  # type: ignore[arg-type]


def test_a_collection_built_with_another_embedding_is_refused_with_a_hint(
    minilm: SentenceTransformerEmbedding,
) -> None:
    from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

    name = _name()
    other = CodeIndex(name, ephemeral=True, embedding_function=DefaultEmbeddingFunction())
    assert other.count() == 0
    with pytest.raises(CodeIndexError, match="Embedding function conflict") as raised:
        CodeIndex(name, ephemeral=True, embedding_function=minilm)
    assert "--embedding" in raised.value.hint


@pytest.mark.docker
def test_retrieve_then_verify_with_query_tests(pocket: CodeIndex, gate: Gate) -> None:
    """The full flow with the real gate: the leap-year function verifies, neighbours fail."""
    tests = [
        "assert leap(2024) is True",
        "assert leap(1900) is False",
        "assert leap(2000) is True",
    ]
    candidates = pocket.search("leap year", k=4)
    resolved = [resolve(c, tests) for c in candidates]
    assert {r.source for r in resolved} == {SpecSource.QUERY}
    result = gate.gate(candidates, [r.spec for r in resolved])
    assert result.kept[0].candidate.metadata["qualified_name"] == "is_leap_year"
    assert result.kept[0].verdict.status is Status.VERIFIED
    assert result.kept[0].verdict.alias == "is_leap_year"
    assert all(item.verdict.status is not Status.VERIFIED for item in result.kept[1:])
    assert len(result.kept) == 1  # the others were tested and failed: never handed over


def test_an_injected_client_and_an_empty_collection(minilm: SentenceTransformerEmbedding) -> None:
    import chromadb
    from chromadb.config import Settings

    client = chromadb.EphemeralClient(settings=Settings(anonymized_telemetry=False))
    index = CodeIndex(_name(), client=client, embedding_function=minilm)
    assert index.location == "<client>"
    assert index.search("anything", k=5) == []
    with pytest.raises(ValueError, match="k must be at least 1"):
        index.search("anything", k=0)
    assert index.get(["nothing"]) == []
