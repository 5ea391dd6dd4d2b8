"""``verify --stored`` and ``audit`` on the planted `hostile_tree` (conftest.py): one bad file
(a bomb imported by an indexed module, a FIFO, links out of the tree) stops neither; the good
snippets are judged, nothing from outside the tree shows. Real Chroma, MiniLM and Docker.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app

runner = CliRunner()

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("isolated_cli", "docker_sandbox")]


def test_verify_stored_survives_a_bomb_reached_through_an_import(
    hostile_tree: Path, host_file_text: str
) -> None:
    assert runner.invoke(app, ["index", str(hostile_tree)]).exit_code == 0

    result = runner.invoke(app, ["verify", "--stored", "--json"])

    assert result.exit_code in {0, 1}, result.output  # never 70 (internal error) or 2
    rows = {row["qualified_name"]: row for row in json.loads(result.stdout)["snippets"]}
    for name in ("double", "triple", "halve"):  # halve's module reaches treepkg.bomb
        assert rows[name]["status"] == "verified", rows[name]
    assert rows["leak"]["status"] != "verified"  # its links were not shipped
    assert host_file_text not in result.output


def test_audit_survives_the_planted_files_and_reports_each_skip(
    hostile_tree: Path, tmp_path: Path, host_file_text: str
) -> None:
    report_file = tmp_path / "audit.json"

    result = runner.invoke(
        app, ["audit", str(hostile_tree), "--no-embedding", "--json", str(report_file)]
    )

    assert result.exit_code == 0, result.output
    report = json.loads(report_file.read_text(encoding="utf-8"))
    assert report["skipped"] == {
        "symlink": 5,
        "not_regular": 2,
        "too_complex": 1,
        "too_large": 1,
        "too_deep": 1,
    }
    bomb = [line for line in report["skipped_files"] if "/treepkg/bomb.py: " in line]
    assert bomb
    assert "too deeply nested" in bomb[0]
    assert report["counts"]["snippets"] >= 5
    assert "treepkg/fifo.py: not a regular file" in result.output
    assert host_file_text not in result.output + report_file.read_text(encoding="utf-8")
