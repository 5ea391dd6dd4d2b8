"""The LangChain examples run as written (as subprocesses, offline, with the real Docker gate)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.docker

EXAMPLES = Path(__file__).resolve().parents[4] / "examples"


def _run(script: str) -> str:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_HUB_DISABLE_PROGRESS_BARS": "1"}
    done = subprocess.run(
        [sys.executable, str(EXAMPLES / script)],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=EXAMPLES.parent,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_retrieve_then_verify_example_uses_only_verified_code(docker_sandbox: object) -> None:
    out = _run("langchain_retrieve_then_verify.py")
    assert "1 result(s) for 'convert a CamelCase identifier to snake_case' ran and passed" in out
    assert "[1] VERIFIED against your tests: passed 3/3 - camel_to_snake (text/case.py:1-8)" in out
    assert "agent adopts: text/case.py:camel_to_snake" in out
    assert "without the gate: text/case.py:snake_to_camel ranked first; it is failed" in out
    for buggy_copy in ("legacy/naming.py", "scripts/rename.py"):
        assert buggy_copy not in out


def test_gate_existing_chroma_collection_example(docker_sandbox: object) -> None:
    out = _run("gate_existing_chroma_collection.py")
    ungated, gated = out.split("\ngated:\n")
    assert "  1. vendored/median" in ungated  # a buggy copy ranks first without the gate
    assert gated.splitlines()[0] == "  1. stats/median: verified (passed 3/3 tests)"
    assert "vendored/median" not in gated and "old/median" not in gated
    assert out.rstrip().endswith("use: stats/median")
