"""`CodeIndex` and the CLI against a real ``chroma run`` server (HttpClient mode)."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.index import CodeIndex, SentenceTransformerEmbedding, split_tree

CODEBASE = Path(__file__).parent / "snippets" / "codebase"
runner = CliRunner()

pytestmark = pytest.mark.chroma_server


def test_index_and_search_through_the_server(
    chroma_server_url: str, minilm: SentenceTransformerEmbedding, tmp_path: Path
) -> None:
    name = f"srv-{uuid.uuid4().hex[:8]}"
    shutil.copytree(CODEBASE, tmp_path / "codebase")
    index = CodeIndex(name, url=chroma_server_url, embedding_function=minilm)
    assert index.replace_files(split_tree(tmp_path / "codebase").files).added == 25

    # A second client (another process would do the same) sees the same collection.
    other = CodeIndex(name, url=chroma_server_url, embedding_function=minilm)
    assert other.count() == 25
    (top,) = other.search("how many days does a month have", k=1)
    assert top.metadata["qualified_name"] == "days_in_month"
    assert top.metadata["tests"][0] == "__doctest_example__('days_in_month(2023, 2)', '28')"

    dates = tmp_path / "codebase" / "pocketlib" / "dates.py"
    dates.write_text(dates.read_text().replace("def weekday_name(", "def day_name("))
    report = other.replace_files(split_tree(tmp_path / "codebase").files)
    assert (report.added, report.removed, report.unchanged) == (1, 1, 24)
    assert index.count() == 25


def test_cli_index_and_search_with_chroma_url(
    chroma_server_url: str,
    minilm: SentenceTransformerEmbedding,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "cache"))
    # Functions without doctests: unverifiable, so no sandbox is needed to hand them over.
    source = (CODEBASE / "pocketlib" / "search.py").read_text().split("def chunked(")[0]
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "search.py").write_text(source)
    where = ["--chroma-url", chroma_server_url, "--collection", f"cli-{uuid.uuid4().hex[:8]}"]
    indexed = runner.invoke(app, ["index", str(tmp_path / "src"), *where])
    assert indexed.exit_code == 0, indexed.output
    assert "2 found: 2 added" in indexed.stdout
    query = "binary search in a sorted list"
    found = runner.invoke(app, ["search", query, "--fetch-k", "2", "--json", *where])
    assert found.exit_code == 0, found.output
    payload = json.loads(found.stdout)
    assert payload["results"][0]["metadata"]["qualified_name"] == "binary_search"
    assert payload["results"][0]["verdict"]["status"] == "unverifiable"
