"""``guardrail verify --stored``: every indexed snippet against its own stored tests, for real.

Real Chroma, the real MiniLM and the real Docker sandbox, on a copy of the pocketlib fixture
codebase with one extra module whose doctest is wrong (``tests/snippets/stored/``).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.gate import Gate
from guardrail.index import (
    CodeIndex,
    split_tree,
    stored_summary,
    verify_stored,
)

SNIPPETS = Path(__file__).parent / "snippets"
runner = CliRunner()


pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("isolated_cli", "docker_sandbox")]


def _codebase(tmp_path: Path, *, wrong: bool) -> Path:
    root = tmp_path / "codebase"
    shutil.copytree(SNIPPETS / "codebase", root)
    if wrong:
        shutil.copy(SNIPPETS / "stored" / "wrong_doctest.py", root / "pocketlib" / "wrong.py")
    return root


def _stored_json(*args: str) -> tuple[int, dict[str, Any]]:
    result = runner.invoke(app, ["verify", "--stored", "--json", *args])
    assert result.exit_code in {0, 1}, result.output
    return result.exit_code, json.loads(result.stdout)


def test_a_wrong_doctest_fails_and_the_run_exits_1(tmp_path: Path) -> None:
    root = _codebase(tmp_path, wrong=True)
    assert runner.invoke(app, ["index", str(root)]).exit_code == 0

    code, payload = _stored_json()

    assert code == 1
    rows = {row["qualified_name"]: row for row in payload["snippets"]}
    assert len(rows) == len(payload["snippets"]) == 27
    shout = rows["shout"]
    assert (shout["status"], shout["reason"], shout["judged_against"]) == (
        "failed",
        "tests_failed",
        "doctest",
    )
    assert shout["file"] == "pocketlib/wrong.py"  # relative to its sys.path root
    assert shout["module"] == "pocketlib.wrong"
    assert shout["line"] == 4
    (stored_test,) = shout["tests"]
    assert "shout(" in stored_test
    assert "[bold]HI!" in stored_test
    assert [t["outcome"] for t in shout["verdict"]["tests"]] == ["FAIL"]
    assert (rows["whisper"]["status"], rows["whisper"]["judged_against"]) == (
        "verified",
        "doctest",
    )
    # A method is judged in its class against the examples that reach it.
    assert (rows["Rect.area"]["status"], rows["Rect.area"]["judged_against"]) == (
        "verified",
        "doctest",
    )
    # Methods and functions without examples have no stored tests: listed, not counted against.
    assert (rows["Rect.contains"]["status"], rows["Rect.contains"]["reason"]) == (
        "unverifiable",
        "no_tests",
    )
    assert rows["Rect.contains"]["judged_against"] == "none"
    assert payload["failing"] == 1
    assert payload["summary"]["failed/tests_failed"] == 1
    assert sum(payload["summary"].values()) == 27
    # Rows come in file, then line order.
    keys = [(row["file"], row["line"]) for row in payload["snippets"]]
    assert keys == sorted(keys)


def test_every_correct_doctest_verifies_and_the_run_exits_0(tmp_path: Path) -> None:
    root = _codebase(tmp_path, wrong=False)
    collection = ["--collection", "clean", "--path", str(tmp_path / "clean")]
    assert runner.invoke(app, ["index", str(root), *collection]).exit_code == 0

    code, payload = _stored_json(*collection)

    assert code == 0
    statuses = {row["status"] for row in payload["snippets"]}
    assert statuses == {"verified", "unverifiable"}
    assert payload["summary"]["verified/passed"] >= 10
    assert payload["failing"] == 0


def test_the_table_shows_data_as_text_and_a_summary(tmp_path: Path) -> None:
    root = _codebase(tmp_path, wrong=True)
    assert runner.invoke(app, ["index", str(root)]).exit_code == 0

    result = runner.invoke(app, ["verify", "--stored"])

    assert result.exit_code == 1, result.output
    out = result.stdout
    # The expected output '[bold]HI!' is data: printed as written, never read as markup.
    assert "[bold]HI!" in out
    assert "wrong.py:4" in out
    assert "1 failed/tests_failed" in out
    assert "unverifiable/no_tests" in out
    assert "verified/passed" in out


def test_library_call_uses_the_gate_and_its_cache(tmp_path: Path, gate: Gate) -> None:
    root = _codebase(tmp_path, wrong=True)
    index = CodeIndex("library", path=tmp_path / "library")
    index.replace_files(split_tree(root).files)

    first = verify_stored(index, gate, chunk=5)
    again = verify_stored(index, gate)

    assert [c.snippet.qualified_name for c in first] == [c.snippet.qualified_name for c in again]
    assert stored_summary(first) == stored_summary(again)
    ran = [c for c in again if c.verdict.tests]
    assert ran
    assert all(c.verdict.cached for c in ran)
    assert [c.snippet.qualified_name for c in first if c.failing] == ["shout"]


def test_bad_input_exits_2_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "missing"
    result = runner.invoke(app, ["verify", "--stored", "--path", str(missing)])
    assert result.exit_code == 2, result.output
    assert "guardrail index PATH" in result.stderr
    assert not missing.exists()

    code_file = tmp_path / "f.py"
    code_file.write_text("def f():\n    return 1\n")
    both = runner.invoke(app, ["verify", "--stored", str(code_file)])
    assert both.exit_code == 2
    assert "--stored judges the indexed snippets" in both.stderr
    neither = runner.invoke(app, ["verify", str(code_file)])
    assert neither.exit_code == 2
    assert "--tests" in neither.stderr
