"""The examples run as written, as separate processes, with the real Docker sandbox.

Each example loads MiniLM and starts its own sandbox pool, so these are the slowest tests of this
tree (about ten seconds each). They run from a scratch directory with a private verdict cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[3]
EXAMPLES = REPO / "examples"

pytestmark = pytest.mark.docker


def _run(script: str, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "GUARDRAIL_CACHE_DIR": str(tmp_path / "cache"),
        "HF_HUB_OFFLINE": "1",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    return subprocess.run(
        [sys.executable, str(EXAMPLES / script), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_llamaindex_query_engine_example(tmp_path: Path, docker_sandbox: object) -> None:
    # docker_sandbox: skip (or fail under CI) exactly like every other Docker test.
    done = _run("llamaindex_query_engine.py", tmp_path)
    assert done.returncode == 0, done.stderr
    plain, gated = done.stdout.split("gated retriever", 1)
    first_plain = plain.splitlines()[1]
    assert "correct" not in first_plain.split()[1], "precondition: a clone ranks first ungated"
    assert "  1. correct" in gated
    assert "verified" in gated
    shown = gated.split("the LLM was shown:", 1)[1]
    assert "def is_leap_year(year):" in shown
    assert "year % 400 != 0" not in shown
    assert shown.count("def is_leap_year") == 1


def test_index_and_search_codebase_example(tmp_path: Path, docker_sandbox: object) -> None:
    done = _run("index_and_search_codebase.py", tmp_path)
    assert done.returncode == 0, done.stderr
    indexed = re.search(r"indexed (\d+) snippets from (\d+) files", done.stdout)
    assert indexed is not None, done.stdout
    assert int(indexed[1]) >= 20
    _, tested, untested = done.stdout.split("\n\n")
    assert "tests from the query" in tested
    assert "judged by each snippet's own doctests" in untested
    handed_over = tested.split("handed over:", 1)[1].split()
    assert handed_over == ["binary_search", "verified"]
    # find_all is never called as binary_search: its module defines that name (it is not it).
    assert re.search(r"find_all\s+error\s+the tests call 'binary_search', which the", tested)
    assert untested.split("handed over:", 1)[1].split()[:2] == ["is_prime", "verified"]


def test_index_and_search_codebase_example_rejects_a_missing_path(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    done = _run("index_and_search_codebase.py", tmp_path, str(missing))
    assert done.returncode == 2
    assert done.stderr.splitlines()[0] == f"error: {missing}: no such file or directory"
