"""What `guardrail search` prints for a person: one line per candidate, 80 columns when piped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app

runner = CliRunner()
pytestmark = pytest.mark.usefixtures("isolated_cli")

SLUGIFY = (
    'def slugify(text):\n    """Turn a title into a URL slug."""\n    return "-".join({}.split())\n'
)
LONG_TEST = "assert slugify('Hello World') == 'hello-world', " + repr("x" * 300) + "\n"


def _two_copies(tmp_path: Path) -> list[str]:
    """A helper and two buggy copies in subfolders, indexed; returns the search arguments."""
    lib = tmp_path / "mylib"
    (lib / "legacy").mkdir(parents=True)
    (lib / "text.py").write_text(SLUGIFY.format("text.lower()"))
    (lib / "legacy" / "text.py").write_text(SLUGIFY.format("text"))
    (lib / "vendor").mkdir()
    (lib / "vendor" / "text.py").write_text(SLUGIFY.format("text.upper()"))
    (tmp_path / "tests.py").write_text(LONG_TEST)
    where = ["--collection", "slugs"]
    indexed = runner.invoke(app, ["index", str(lib), *where])
    assert indexed.exit_code == 0, indexed.output
    return where


def test_one_line_per_candidate_within_80_columns_naming_each_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    where = _two_copies(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["search", "make a URL slug", "--tests", "tests.py", *where])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert [line for line in lines if len(line) > 80] == []
    (verified,) = [line for line in lines if line.lstrip().startswith("1 ")]
    dropped = next(line for line in lines if "legacy" in line)
    assert "verified" in verified and "mylib/text.py:1" in verified and "1/1 query" in verified
    assert dropped.startswith("dropped failed") and "mylib/legacy/text.py:1" in dropped
    assert "FAIL: assert s" in dropped and dropped.endswith("…")
    assert len(lines) == 6  # title, header, three candidates, caption


def test_k_limits_the_lines_and_counts_the_rest(tmp_path: Path) -> None:
    where = _two_copies(tmp_path)
    tests = str(tmp_path / "tests.py")
    result = runner.invoke(app, ["search", "make a URL slug", "--tests", tests, "-k", "1", *where])
    assert result.exit_code == 0, result.output
    assert "... 1 more dropped (all are in --json)" in result.stdout
    shown = [line for line in result.stdout.splitlines() if line.lstrip()[:2] in {"1 ", "dr"}]
    assert len(shown) == 2  # the verified one, and one of the two dropped
    payload = json.loads(
        runner.invoke(
            app, ["search", "make a URL slug", "--tests", tests, "-k", "1", "--json", *where]
        ).stdout
    )
    assert len(payload["results"]) == 1 and len(payload["dropped"]) == 2


def test_an_empty_query_and_an_empty_test_list_are_input_errors(tmp_path: Path) -> None:
    where = _two_copies(tmp_path)
    empty = runner.invoke(app, ["search", "  ", *where])
    assert empty.exit_code == 2
    assert "the query is empty" in empty.output
    (tmp_path / "none.json").write_text("[]")
    no_tests = runner.invoke(
        app, ["search", "slug", "--tests", str(tmp_path / "none.json"), *where]
    )
    assert no_tests.exit_code == 2
    assert "there are no tests" in no_tests.output
    helped = runner.invoke(app, ["search", "--help"])
    assert "QUERY" in helped.output and "FILE" in helped.output
