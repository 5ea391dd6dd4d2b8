"""``guardrail verify`` and ``guardrail sandbox check`` in-process, with the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app

BUG_TYPES = Path(__file__).parent / "snippets" / "bug_types"
HOSTILE = Path(__file__).parent / "snippets" / "hostile"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "cache"))


@pytest.mark.docker
def test_verify_json_reports_every_candidate(docker_sandbox: object) -> None:
    files = [
        BUG_TYPES / "canonical.py",
        BUG_TYPES / "wrong_operator.py",
        HOSTILE / "os_exit_at_import.py",
    ]
    result = runner.invoke(
        app, ["verify", *map(str, files), "--tests", str(BUG_TYPES / "tests.py"), "--json"]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert [row["source"] for row in rows] == [str(f) for f in files]
    assert [row["status"] for row in rows] == ["verified", "failed", "error"]
    assert [t["outcome"] for t in rows[0]["tests"]] == ["pass"] * 6
    assert "FAIL" in [t["outcome"] for t in rows[1]["tests"]]


@pytest.mark.docker
def test_verify_exits_1_when_nothing_verified_and_prints_a_table(
    docker_sandbox: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    snippets = Path("snippets.jsonl")
    lines = [
        {"code": (BUG_TYPES / "off_by_one.py").read_text(), "id": "clone-1"},
        {"code": "not python at all"},
    ]
    snippets.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    result = runner.invoke(app, ["verify", str(snippets), "--tests", str(BUG_TYPES / "tests.py")])
    assert result.exit_code == 1, result.output
    assert "clone-1" in result.stdout and "failed" in result.stdout
    assert f"{snippets}:2" in result.stdout and "unverifiable" in result.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"code": "def f(): pass"}\nnot json\n', "snippets.jsonl:2: not valid JSON"),
        ('{"id": "x"}\n', "snippets.jsonl:1: code: Field required"),
    ],
)
def test_verify_rejects_bad_jsonl_with_file_and_line(
    tmp_path: Path, content: str, message: str
) -> None:
    snippets = tmp_path / "snippets.jsonl"
    snippets.write_text(content)
    result = runner.invoke(app, ["verify", str(snippets), "--tests", str(BUG_TYPES / "tests.py")])
    assert result.exit_code == 2
    assert message in result.stderr


def test_verify_rejects_unparseable_tests_before_running(tmp_path: Path) -> None:
    tests = tmp_path / "tests.py"
    tests.write_text("assert f(1) == 1\nassert f(\n")
    result = runner.invoke(app, ["verify", str(BUG_TYPES / "canonical.py"), "--tests", str(tests)])
    assert result.exit_code == 2
    assert "tests.py:2: tests do not parse" in result.stderr


def test_verify_missing_file(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["verify", str(tmp_path / "nope.py"), "--tests", str(BUG_TYPES / "tests.py")]
    )
    assert result.exit_code == 2
    assert "nope.py: no such file" in result.stderr


# What gVisor's kernel does not close yet, each with the runner change that would (see
# GVISOR_PROPERTIES in guardrail/sandbox/doctor.py): any uid may read /proc/1/environ, so the
# supervisor must re-exec itself with an empty environment. Strict: once it holds, this fails.
KNOWN_GAPS = {"runc": set(), "runsc": {"supervisor's environment closed"}}


@pytest.mark.docker
def test_sandbox_check_proves_the_hardening(sandbox_runtime: str) -> None:
    result = runner.invoke(app, ["sandbox", "check", "--json", "--runtime", sandbox_runtime])
    report = json.loads(result.stdout)
    assert report["image_id"].startswith("sha256:")
    assert report["runtime"] == sandbox_runtime
    names = {check["name"]: check["ok"] for check in report["checks"]}
    assert len(names) == 27 and names[f"container: runtime {sandbox_runtime}"], names
    assert {name for name, ok in names.items() if not ok} == KNOWN_GAPS[sandbox_runtime]
    assert result.exit_code == (3 if KNOWN_GAPS[sandbox_runtime] else 0), result.output


@pytest.mark.docker
def test_sandbox_check_names_the_runtimes_the_engine_has(docker_sandbox: object) -> None:
    result = runner.invoke(app, ["sandbox", "check", "--runtime", "no-such-runtime"])
    assert result.exit_code == 3
    assert "the Docker engine has no runtime 'no-such-runtime'; it has:" in result.stderr
    assert "runc" in result.stderr.partition("it has:")[2]


def test_sandbox_check_without_an_engine_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    result = runner.invoke(app, ["sandbox", "check"])
    assert result.exit_code == 3
    assert "no Docker engine answers" in result.stderr
