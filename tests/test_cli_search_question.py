"""``guardrail search`` prints the gate's question when verified results disagree: real Chroma,
MiniLM and Docker sandbox; candidates' values reach the terminal as text, never as markup."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("isolated_cli")]
runner = CliRunner()
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_search_prints_the_question_with_a_test_per_answer(
    tmp_path: Path, docker_sandbox: object
) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "sizes.py").write_text(
        "def size_label(n):\n    return '[bold red]small[/]' if n < 5 else 'big'\n"
    )
    (code / "other_sizes.py").write_text(
        "def label_of_size(n):\n    return '\\x1b[2Jsmall' if n < 3 else 'big'\n"
    )
    assert runner.invoke(app, ["index", str(code)]).exit_code == 0
    tests = tmp_path / "tests.py"
    tests.write_text("assert size_label(10) == 'big'\n")
    shown = runner.invoke(app, ["search", "size label", "--tests", str(tests)])
    assert shown.exit_code == 0, shown.output
    out = shown.stdout
    assert "QUESTION: the 2 candidates that pass the tests disagree on size_label(" in out
    assert "'[bold red]small[/]'" in out  # markup shown as it is
    assert "\\x1b[2Jsmall" in out and not RAW.search(out.replace("\n", ""))
    assert out.count("assert size_label(") == 2  # one ready-to-paste test per answer
    as_json = runner.invoke(app, ["search", "size label", "--tests", str(tests), "--json"])
    payload = json.loads(as_json.stdout)
    question = payload["question"]
    assert question["probe"]["entry_point"] == "size_label"
    assert len(question["answers"]) == 2
    assert all(answer["test"].startswith("assert size_label(") for answer in question["answers"])
    # The first answer's test, added to the tests, leaves only the candidates that gave it.
    tests.write_text(f"assert size_label(10) == 'big'\n{question['answers'][0]['test']}\n")
    settled = json.loads(
        runner.invoke(app, ["search", "size label", "--tests", str(tests), "--json"]).stdout
    )
    verified = [r for r in settled["results"] if r["verdict"]["status"] == "verified"]
    assert len(verified) == 1 and settled["question"] is None


def test_search_under_agree_withholds_disagreeing_results(
    tmp_path: Path, docker_sandbox: object
) -> None:
    code = tmp_path / "code"
    code.mkdir()
    (code / "sizes.py").write_text("def size_label(n):\n    return 'small' if n < 5 else 'big'\n")
    (code / "more.py").write_text("def label_of_size(n):\n    return 'small' if n < 3 else 'big'\n")
    assert runner.invoke(app, ["index", str(code)]).exit_code == 0
    tests = tmp_path / "tests.py"
    tests.write_text("assert size_label(10) == 'big'\n")
    shown = runner.invoke(app, ["search", "size label", "--tests", str(tests), "--policy", "agree"])
    assert shown.exit_code == 1, shown.output  # nothing handed over
    out = shown.stdout
    assert out.count("withheld verified") == 2
    assert "policy agree: 0 handed over (2 verified); withheld: they disagree" in out
    assert "QUESTION: the 2 candidates that pass the tests disagree on size_label(" in out
    # Who gives each answer is named by file and line, as in the table, not by a hash id.
    flat = " ".join(out.split())
    assert "sizes.py:1 (rank" in flat and "more.py:1 (rank" in flat
    payload = json.loads(
        runner.invoke(
            app, ["search", "size label", "--tests", str(tests), "--policy", "agree", "--json"]
        ).stdout
    )
    assert payload["results"] == [] and payload["abstained"] is True
    assert len(payload["dropped"]) == 2 and payload["question"] is not None
    # One answer's test settles it: the one candidate left is handed over.
    tests.write_text(
        f"assert size_label(10) == 'big'\n{payload['question']['answers'][0]['test']}\n"
    )
    settled = runner.invoke(
        app, ["search", "size label", "--tests", str(tests), "--policy", "agree"]
    )
    assert settled.exit_code == 0, settled.output
    assert "policy agree: 1 handed over" in settled.stdout
