"""``guardrail audit PATH``, for real: Chroma, the bundled MiniLM and the Docker sandbox, on
clonelib (``tests/snippets/audit/``: toolz 1.0.0's itertoolz and a module of copy-pasted
functions with planted bugs, one copy harmless).

Done when: every planted pair is found with an input that really diverges when re-run outside
the sandbox (a plain ``python3`` subprocess importing the copied package), repeated runs give the
same fingerprints, and the SARIF validates against the 2.1.0 schema.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sarif_check import validate_sarif
from typer.testing import CliRunner

from guardrail.cli.app import app

CLONELIB = Path(__file__).parent / "snippets" / "audit"
PLANTED = {"isdistinct", "nth", "frequencies"}  # the copies with a planted bug
HARMLESS = "count"  # a copy with a renamed loop variable
runner = CliRunner()

pytestmark = [pytest.mark.docker, pytest.mark.usefixtures("isolated_cli", "docker_sandbox")]

# Runs one function of the copied package on literal arguments, outside any sandbox.
_HOST_CALL = """
import ast, importlib, json, sys
module, name, args, kwargs = json.loads(sys.argv[1])
function = getattr(importlib.import_module(module), name)
try:
    named = {key: ast.literal_eval(text) for key, text in kwargs.items()}
    value = function(*map(ast.literal_eval, args), **named)
except Exception as exc:
    print(json.dumps(["raises", type(exc).__name__]))
else:
    print(json.dumps(["value", repr(value)]))
"""


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    shutil.copytree(CLONELIB, root)
    return root


def _audit(tree: Path, out: Path, *extra: str) -> tuple[int, dict[str, Any], dict[str, Any]]:
    out.mkdir(exist_ok=True)
    result = runner.invoke(
        app,
        [
            "audit",
            str(tree / "clonelib"),
            "--json",
            str(out / "audit.json"),
            "--sarif",
            str(out / "audit.sarif"),
            "--html",
            str(out / "audit.html"),
            *extra,
        ],
    )
    assert result.exit_code in {0, 1}, result.output
    report = json.loads((out / "audit.json").read_text(encoding="utf-8"))
    sarif = json.loads((out / "audit.sarif").read_text(encoding="utf-8"))
    return result.exit_code, report, sarif


def _on_host(root: Path, side: dict[str, Any], given: dict[str, Any]) -> list[str]:
    payload = json.dumps([side["module"], side["qualified_name"], given["args"], given["kwargs"]])
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run(
        [sys.executable, "-c", _HOST_CALL, payload],
        capture_output=True,
        text=True,
        env=env,
        check=True,
        timeout=60,
    )
    kind, text = json.loads(done.stdout)
    return [kind, text]


def test_every_planted_pair_is_found_with_an_input_that_really_diverges(
    tree: Path, tmp_path: Path
) -> None:
    code, report, sarif = _audit(tree, tmp_path / "out")

    assert code == 1  # findings, and --fail-on low is the default
    names = [f["left"]["qualified_name"] for f in report["findings"]]
    assert all(
        f["left"]["qualified_name"] == f["right"]["qualified_name"] for f in report["findings"]
    )
    assert set(names) >= PLANTED
    assert len(names) == len(set(names))  # one finding per pair
    assert HARMLESS not in names  # clustered, run, never a finding
    for finding in report["findings"]:
        left, right, given = finding["left"], finding["right"], finding["input"]
        host_left, host_right = _on_host(tree, left, given), _on_host(tree, right, given)
        assert host_left != host_right, finding  # it really diverges outside the sandbox
        assert host_left == [left["output"]["kind"], left["output"]["text"]]
        assert host_right == [right["output"]["kind"], right["output"]["text"]]
        for side in (left, right):
            assert side["file"].startswith("clonelib/")
            assert side["line"] > 0
    validate_sarif(sarif)
    page = (tmp_path / "out" / "audit.html").read_text(encoding="utf-8")
    assert all(name in page for name in PLANTED)


def test_findings_are_graded_by_the_copies_own_tests(tree: Path, tmp_path: Path) -> None:
    _, report, _ = _audit(tree, tmp_path / "out")
    by_name = {f["left"]["qualified_name"]: f for f in report["findings"]}

    nth = by_name["nth"]
    # The original passes its doctest; the copy fails it; the input is the doctest's.
    assert (nth["left"]["module"], nth["left"]["tests"]) == ("clonelib.itertoolz", "pass")
    assert (nth["right"]["module"], nth["right"]["tests"]) == ("clonelib.vendored", "fail")
    assert (nth["severity"], nth["rule"]) == ("high", "GRA001")
    assert nth["input"]["origin"] in {"test", "doctest"}  # its stored doctest's arguments
    assert by_name["isdistinct"]["severity"] == "high"
    # The original's example is skipped (no stored tests); only the failing copy has one.
    assert {by_name["frequencies"]["left"]["tests"], by_name["frequencies"]["right"]["tests"]} == {
        "none",
        "fail",
    }
    assert by_name["frequencies"]["severity"] == "medium"
    counts = report["counts"]
    assert counts["confirmed_pairs"] >= 4
    assert counts["pairs_run"] >= 4
    assert counts["sandbox_runs"] > 0


def test_repeated_runs_give_the_same_fingerprints(tree: Path, tmp_path: Path) -> None:
    _, first, first_sarif = _audit(tree, tmp_path / "one")
    _, second, second_sarif = _audit(tree, tmp_path / "two", "--no-cache")

    def prints(sarif: dict[str, Any]) -> list[str]:
        return [
            r["partialFingerprints"]["guardrailNearClone/v1"] for r in sarif["runs"][0]["results"]
        ]

    assert [f["fingerprint"] for f in first["findings"]] == [
        f["fingerprint"] for f in second["findings"]
    ]
    assert (
        prints(first_sarif) == prints(second_sarif) == [f["fingerprint"] for f in first["findings"]]
    )
    assert len(set(prints(first_sarif))) == len(first["findings"]) >= len(PLANTED)


def test_without_embeddings_the_planted_pairs_are_found_by_tokens_alone(
    tree: Path, tmp_path: Path
) -> None:
    _, embedded, _ = _audit(tree, tmp_path / "embedded")
    code, tokens_only, sarif = _audit(tree, tmp_path / "tokens", "--no-embedding")
    assert code == 1
    names = {f["left"]["qualified_name"] for f in tokens_only["findings"]}
    assert names >= PLANTED and HARMLESS not in names
    assert {f["fingerprint"] for f in tokens_only["findings"]} >= {
        f["fingerprint"] for f in embedded["findings"] if f["left"]["qualified_name"] in PLANTED
    }
    validate_sarif(sarif)


def test_a_path_audit_embeds_only_candidate_pairs_and_writes_no_index(
    tree: Path, tmp_path: Path
) -> None:
    _, report, _ = _audit(tree, tmp_path / "memory")
    counts = report["counts"]
    assert 0 < counts["embedded"] < counts["compared"] < counts["snippets"]
    assert not (tmp_path / "index").exists()  # GUARDRAIL_INDEX_DIR (isolated_cli): untouched
    _, indexed, _ = _audit(tree, tmp_path / "indexed", "--index")
    assert indexed["counts"]["embedded"] == 0  # read from the index it wrote first
    assert (tmp_path / "index").is_dir()
    assert [f["fingerprint"] for f in indexed["findings"]] == [
        f["fingerprint"] for f in report["findings"]
    ]
    for memory, stored in zip(report["findings"], indexed["findings"], strict=True):
        assert memory["embedding_similarity"] == pytest.approx(stored["embedding_similarity"])


def test_fail_on_sets_the_exit_code(tree: Path, tmp_path: Path) -> None:
    target = str(tree / "clonelib")
    assert runner.invoke(app, ["audit", target, "--fail-on", "never"]).exit_code == 0
    assert runner.invoke(app, ["audit", target, "--fail-on", "high"]).exit_code == 1
    clean = tmp_path / "clean"
    shutil.copytree(tree, clean)
    (clean / "clonelib" / "vendored.py").unlink()
    result = runner.invoke(app, ["audit", str(clean / "clonelib"), "--collection", "clean-tree"])
    assert result.exit_code == 0, result.output
    assert "0 findings" in result.output


def test_an_existing_collection_is_audited_without_a_path(tree: Path) -> None:
    assert runner.invoke(app, ["index", str(tree), "--collection", "lib"]).exit_code == 0
    result = runner.invoke(app, ["audit", "--collection", "lib", "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    assert "isdistinct" in result.output


def test_bad_input_is_exit_2_and_writes_nothing(tree: Path, tmp_path: Path) -> None:
    nowhere = tmp_path / "missing" / "audit.json"
    cases = [
        ["audit", "--fail-on", "low"],  # neither PATH nor --collection
        ["audit", str(tmp_path / "no-such-tree")],
        ["audit", "--collection", "never-indexed"],
        ["audit", str(tree / "clonelib"), "--json", str(nowhere)],
        ["audit", str(tree / "clonelib"), "--fail-on", "severe"],
        ["audit", "--collection", "lib", "--no-embedding"],  # tokens alone need a PATH
        ["audit", str(tree / "clonelib"), "--no-embedding", "--index"],  # nothing or all
    ]
    for args in cases:
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
    assert not nowhere.parent.exists()


def test_an_unavailable_sandbox_is_exit_3(tree: Path) -> None:
    result = runner.invoke(
        app, ["audit", str(tree / "clonelib"), "--image", "guardrail-no-such-image:0"]
    )
    assert result.exit_code == 3, result.output
