"""``guardrail index`` and ``guardrail search`` in-process, with real Chroma and the real MiniLM."""

from __future__ import annotations

import json
import os
import re
import shutil
import uuid
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.index import CodeIndex

CODEBASE = Path(__file__).parent / "snippets" / "codebase"
runner = CliRunner()


pytestmark = pytest.mark.usefixtures("isolated_cli")


def _codebase(tmp_path: Path) -> Path:
    target = tmp_path / "codebase"
    shutil.copytree(CODEBASE, target)
    return target


def test_index_reports_counts_then_reindexing_is_a_no_op(tmp_path: Path) -> None:
    codebase = _codebase(tmp_path)
    first = runner.invoke(app, ["index", str(codebase)])
    assert first.exit_code == 0, first.output
    assert "files     6 read, 0 skipped" in first.stdout
    assert "25 found: 25 added, 0 updated, 0 unchanged; 0 old snippets removed" in first.stdout
    assert str(tmp_path / "index") in first.stdout
    again = runner.invoke(app, ["index", str(codebase)])
    assert again.exit_code == 0, again.output
    assert "25 found: 0 added, 0 updated, 25 unchanged; 0 old snippets removed" in again.stdout


def test_reindexing_a_changed_file_replaces_its_snippets_and_lists_skipped_files(
    tmp_path: Path,
) -> None:
    codebase = _codebase(tmp_path)
    collection = ["--collection", "changes", "--path", str(tmp_path / "elsewhere")]
    assert runner.invoke(app, ["index", str(codebase), *collection]).exit_code == 0
    text = codebase / "pocketlib" / "text.py"
    text.write_text(text.read_text().replace("def camel_to_snake(", "def to_snake_case("))
    (codebase / "pocketlib" / "broken.py").write_text("def broken(:\n    pass\n")

    result = runner.invoke(app, ["index", str(codebase), *collection])

    assert result.exit_code == 0, result.output
    assert "files     6 read, 1 skipped" in result.stdout
    assert "25 found: 1 added, 0 updated, 24 unchanged; 1 old snippets removed" in result.stdout
    assert "broken.py:1: syntax error" in result.stdout
    index = CodeIndex("changes", path=tmp_path / "elsewhere")
    (top,) = index.search("convert CamelCase to snake_case", k=1)
    assert top.metadata["qualified_name"] == "to_snake_case"
    assert index.count() == 25


def test_reindexing_drops_deleted_files_and_files_that_stopped_parsing(tmp_path: Path) -> None:
    codebase = _codebase(tmp_path)
    collection = ["--collection", "gone", "--path", str(tmp_path / "elsewhere")]
    assert runner.invoke(app, ["index", str(codebase), *collection]).exit_code == 0
    index = CodeIndex("gone", path=tmp_path / "elsewhere")
    before = {Path(file).name for file in index.files()}
    (codebase / "pocketlib" / "text.py").unlink()
    (codebase / "pocketlib" / "dates.py").write_text("def broken(:\n    pass\n")

    result = runner.invoke(app, ["index", str(codebase), *collection])

    assert result.exit_code == 0, result.output
    after = {Path(file).name for file in index.files()}
    assert {"text.py", "dates.py"} <= before
    assert after == before - {"text.py", "dates.py"}
    assert not any(
        c.metadata["qualified_name"] == "is_leap_year" for c in index.search("leap year", k=5)
    )


def test_index_of_one_broken_file_is_bad_input_with_file_and_line(tmp_path: Path) -> None:
    broken = tmp_path / "broken.py"
    broken.write_text("import os\n\ndef broken(:\n    pass\n")
    result = runner.invoke(app, ["index", str(broken)])
    assert result.exit_code == 2
    assert f"{broken}:3: syntax error" in result.stderr


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["index", "{tmp}/missing"], "missing: no such file or directory"),
        (["index", "{tmp}", "--path", "{tmp}/i", "--chroma-url", "http://x:1"], "not both"),
        (["search", "q", "--tests", "{tmp}/t.py"], "t.py: no such tests file"),
        (["search", "q", "--entry-point", "f"], "give --tests too"),
        (["search", "q", "-k", "5", "--fetch-k", "2"], "asks for more results than --fetch-k 2"),
        (["search", "q", "--path", "{tmp}/none"], "none: the directory does not exist"),
        (["index", "{tmp}", "--collection", "x"], "collection name 'x' is not one Chroma accepts"),
    ],
)
def test_bad_input_exits_2_with_one_error_line(
    tmp_path: Path, arguments: list[str], message: str
) -> None:
    result = runner.invoke(app, [a.format(tmp=tmp_path) for a in arguments])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ")
    assert message in result.stderr


def test_an_unreachable_chroma_server_exits_3() -> None:
    result = runner.invoke(app, ["search", "q", "--chroma-url", "http://127.0.0.1:9"])
    assert result.exit_code == 3, result.output
    assert result.stderr.startswith("error: ")
    assert "no Chroma server answers" in result.stderr


def test_search_tests_file_that_does_not_parse_names_file_and_line(tmp_path: Path) -> None:
    tests = tmp_path / "leap_tests.py"
    tests.write_text("assert leap(2024)\nassert leap(1900) ==\n")
    result = runner.invoke(app, ["search", "leap year", "--tests", str(tests)])
    assert result.exit_code == 2
    assert f"{tests}:2: tests do not parse" in result.stderr


def _index_without_doctests(tmp_path: Path) -> list[str]:
    """A collection of functions without stored tests, so searching it needs no sandbox."""
    (tmp_path / "src").mkdir()
    source = (CODEBASE / "pocketlib" / "search.py").read_text().split("def chunked(")[0]
    (tmp_path / "src" / "search.py").write_text(source)
    where = ["--collection", f"plain-{uuid.uuid4().hex[:8]}"]
    assert runner.invoke(app, ["index", str(tmp_path / "src"), *where]).exit_code == 0
    return where


def test_search_json_shape_for_unverifiable_results(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = _index_without_doctests(tmp_path)
    # Nothing has tests, so no engine is contacted: a dead one must not matter.
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    result = runner.invoke(
        app, ["search", "indexes of a value", "--json", "--fetch-k", "5", *where]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert set(payload) == {
        "query",
        "collection",
        "policy",
        "fetch_k",
        "k",
        "abstained",
        "results",
        "dropped",
        "question",
    }
    assert payload["question"] is None  # nothing verified: nothing to ask
    assert (payload["policy"], payload["fetch_k"], payload["k"]) == ("rerank", 5, 5)
    assert [r["rank"] for r in payload["results"]] == [1, 2]  # only two snippets exist
    top = payload["results"][0]
    assert top["metadata"]["qualified_name"] == "find_all"
    assert top["spec_source"] == "none"
    assert top["verdict"]["status"] == "unverifiable"
    assert top["verdict"]["reason"] == "no_tests"
    assert top["code"].startswith("from collections.abc import Sequence\n\n\ndef find_all(")
    assert payload["dropped"] == []


def test_search_filter_policy_hands_over_nothing_unverified_and_exits_1(tmp_path: Path) -> None:
    where = _index_without_doctests(tmp_path)
    result = runner.invoke(app, ["search", "binary search", "--policy", "filter", *where])
    assert result.exit_code == 1, result.output
    assert "policy filter: 0 handed over (2 unverifiable)" in result.stdout
    assert result.stdout.count("dropped") == 2


@pytest.mark.docker
def test_search_with_tests_verifies_and_ranks_verified_first(
    docker_sandbox: object, tmp_path: Path
) -> None:
    """The real Docker sandbox judges the candidates (the fixture proves it is available)."""
    assert runner.invoke(app, ["index", str(_codebase(tmp_path))]).exit_code == 0
    tests = tmp_path / "leap_tests.py"
    tests.write_text(
        "assert leap(2024) is True\nassert leap(1900) is False\nassert leap(2000) is True\n"
    )
    result = runner.invoke(
        app, ["search", "leap year", "--tests", str(tests), "--fetch-k", "4", "--json"]
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    (verified,) = payload["results"]
    assert verified["metadata"]["qualified_name"] == "is_leap_year"
    assert verified["verdict"]["status"] == "verified"
    assert verified["verdict"]["alias"] == "is_leap_year"
    assert verified["spec_source"] == "query"
    assert len(payload["dropped"]) == 3
    assert {d["verdict"]["status"] for d in payload["dropped"]} <= {"failed", "error"}

    table = runner.invoke(app, ["search", "leap year", "--fetch-k", "3"])  # stored doctests
    assert table.exit_code == 0, table.output
    assert "is_leap_year" in table.stdout and "3/3 doctest" in table.stdout


RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


@pytest.mark.docker
def test_file_names_and_the_query_are_shown_as_text(tmp_path: Path, docker_sandbox: object) -> None:
    """Names from the indexed tree and the query reach the tables as text, never as markup."""
    code = tmp_path / "code"
    code.mkdir()
    name = "evil [bold green]verified[ \x1b]0;t\x07 \u202e.py"
    (code / name).write_text(
        'def square(x):\n    """\n    >>> square(3)\n    9\n    """\n    return x + x\n'
    )
    (code / "broken [b]x[b] [i \x1b[2J.py").write_text("def broken(:\n")
    os.close(os.open(bytes(code) + b"/not \xff utf-8.py", os.O_CREAT | os.O_WRONLY))
    where = ["--collection", f"hostile-{uuid.uuid4().hex[:8]}"]
    indexed = runner.invoke(app, ["index", str(code), *where])
    assert indexed.exit_code == 0, indexed.output
    assert not RAW.search(indexed.stdout.replace("\n", ""))
    assert "broken [b]x[b] [i \\x1b[2J.py:1: syntax error" in indexed.stdout
    assert "not \\udcff utf-8.py: the file name is not valid UTF-8" in indexed.stdout
    query = "square [/] \x1b]0;t\x07"
    result = runner.invoke(app, ["search", query, "--fetch-k", "1", *where])
    assert result.exit_code == 1, result.output  # the only snippet fails its doctest: dropped
    assert not RAW.search(result.stdout.replace("\n", ""))
    assert "guardrail search: square [/] \\x1b]0;t\\x07" in result.stdout
    dropped = next(line for line in result.stdout.splitlines() if "dropped" in line)
    # Dropped as failed, or as timeout/error on a loaded machine: never verified.
    assert re.search(r"^dropped (failed|timeout|error) ", dropped), dropped
    # Cut from the start to fit 80 columns (the file name's end stays), escaped, never markup.
    assert "0;t\\x07 \\u202e.py:1 " in dropped
    assert [line for line in result.stdout.splitlines() if len(line) > 80] == []
    as_json = runner.invoke(app, ["search", query, "--fetch-k", "1", "--json", *where])
    payload = json.loads(as_json.stdout)
    assert payload["query"] == query
    dropped_metadata = payload["dropped"][0]["metadata"]
    assert dropped_metadata["file"] == name  # relative to its root (a script: its folder)
    assert dropped_metadata["root"] == str(code.resolve())
