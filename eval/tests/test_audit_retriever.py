"""``guardrail audit retriever`` in-process through the core app: real Chroma stores built by the
user's factories (`fixtures/retrievers/user_retrievers.py`), offline MiniLM, real Docker gate."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release"
FACTORIES = FIXTURES / "retrievers"
runner = CliRunner()


@pytest.fixture(autouse=True)
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Caches in the test's folder; the factories' folder is the current directory, as for a
    user who runs the command beside their module."""
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(FACTORIES)
    monkeypatch.setattr(sys, "path", list(sys.path))  # the command adds the cwd to it


def _audit(*arguments: str) -> Any:
    return runner.invoke(app, ["audit", "retriever", "--pool", str(RELEASE), *arguments])


def _arms(out: Path, system: str) -> dict[str, dict[str, Any]]:
    """The system's arms in summary.json by what follows the system's name ("" = ungated)."""
    summary = json.loads((out / "summary.json").read_text())
    return {
        arm["name"].removeprefix(system): arm for arm in summary["arms"] if arm["system"] == system
    }


def _ranked_ids(results_file: Path) -> list[list[str]]:
    results = json.loads(results_file.read_text())
    return [[item["corpus_id"] for item in q["top_results"]] for q in results["per_query"]]


@pytest.mark.docker
@pytest.mark.parametrize("factory", ["langchain_chroma", "llamaindex_chroma"])
def test_a_users_retriever_scores_as_dense_with_the_same_embedding(
    factory: str, tmp_path: Path
) -> None:
    out = tmp_path / "out"
    arguments = ["--retriever", f"user_retrievers:{factory}", "--system", "dense"]
    result = _audit(*arguments, "--out", str(out))
    assert result.exit_code == 0, result.output
    assert factory in result.stdout
    mine, dense = _arms(out, factory), _arms(out, "dense-minilm")
    assert mine.keys() == dense.keys() and "" in mine and len(mine) >= 2
    for arm, theirs in dense.items():  # same model, same text: same rankings, same numbers
        assert mine[arm]["metrics"] == theirs["metrics"], arm
        assert mine[arm]["agent"] == theirs["agent"], arm
    ungated = mine[""]
    assert ungated["metrics"]["exec@1"] == pytest.approx(1 / 3, abs=1e-4)
    assert max(arm["metrics"]["exec@1"] for arm in mine.values() if arm["gated"]) == 1.0
    assert ungated["canonical_below"] is None  # a top-k retriever does not score every snippet
    rankings = [_ranked_ids(out / arm[""]["results_file"]) for arm in (mine, dense)]
    assert rankings[0] == rankings[1]


@pytest.mark.docker
def test_a_retriever_that_ignores_k_is_warned_about() -> None:
    result = _audit("--retriever", "user_retrievers:ignores_k")
    assert result.exit_code == 0, result.output
    assert (
        "warning: ignores_k returned 4 snippets for query 'q_0001' (and maybe others), not 10"
        in result.stderr
    )


@pytest.mark.docker
def test_a_factory_that_raises_exits_2_naming_it_and_writes_nothing(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = _audit("--retriever", "user_retrievers:raising", "--out", str(out))
    assert result.exit_code == 2, result.output
    assert (
        "error: --retriever 'user_retrievers:raising' raised ConnectionError: embedding service"
        " unreachable" in result.stderr
    )
    assert not out.exists()


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--retriever", "user_retrievers"], "expected module:factory"),
        (["--retriever", "nowhere_module:make"], "no module named 'nowhere_module'"),
        (["--retriever", "user_retrievers:missing"], "has no attribute 'missing'"),
        (["--retriever", "user_retrievers:NOT_CALLABLE"], "not a callable factory"),
        (["--retriever", "user_retrievers:one_argument"], "factory(documents, k)"),
        (["--retriever", "broken_retrievers:make"], "importing broken_retrievers raised KeyError"),
        (["--retriever", "user_retrievers:unannotated"], "give --framework langchain|llamaindex"),
        (
            ["--retriever", "user_retrievers:unannotated", "--framework", "haystack"],
            "--framework 'haystack': expected one of langchain, llamaindex",
        ),
        (
            ["--retriever", "user_retrievers:langchain_chroma", "--system", "sparse"],
            "--system 'sparse': expected one of dense, bm25, all",
        ),
        (
            ["--retriever", "user_retrievers:langchain_chroma", "--name", "a/b"],
            "system name 'a/b': use letters, digits",
        ),
        (["--retriever", "user_retrievers:langchain_chroma", "--fetch-k", "0"], "--fetch-k"),
    ],
)
def test_bad_input_exits_2_before_anything_runs(arguments: list[str], message: str) -> None:
    # No Docker needed: every one of these is refused before the sandbox is asked for.
    result = _audit(*arguments)
    assert result.exit_code == 2, result.output
    assert "error:" in result.stderr
    assert message in result.stderr


def test_the_retriever_option_is_required() -> None:
    result = runner.invoke(app, ["audit", "retriever"])
    assert result.exit_code == 2
    assert "--retriever" in result.stderr
