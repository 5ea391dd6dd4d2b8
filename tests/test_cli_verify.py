"""``guardrail verify`` and ``guardrail sandbox check`` in-process, with the real sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import NoReturn

import pytest
from typer.testing import CliRunner, Result

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


# What a runtime does not close yet, each with the runner change that would (see
# GVISOR_PROPERTIES in guardrail/sandbox/doctor.py). Strict: once a gap closes, this fails.
KNOWN_GAPS: dict[str, set[str]] = {"runc": set(), "runsc": set()}


@pytest.mark.docker
def test_sandbox_check_proves_the_hardening(sandbox_runtime: str) -> None:
    result = runner.invoke(app, ["sandbox", "check", "--json", "--runtime", sandbox_runtime])
    report = json.loads(result.stdout)
    assert report["image_id"].startswith("sha256:")
    assert report["runtime"] == sandbox_runtime
    names = {check["name"]: check["ok"] for check in report["checks"]}
    assert len(names) == 43 and names[f"container: runtime {sandbox_runtime}"], names
    assert sum(name.startswith("context: ") for name in names) == 4
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
    error = " ".join(result.stderr.split())
    assert (
        "no Docker engine answers at unix:///nonexistent/docker.sock: there is no engine socket"
        " there (Docker is not installed, or not started)"
    ) in error
    assert "sudo apt-get install docker.io" in error and "sudo systemctl start docker" in error
    for internal in ("Connection aborted", "FileNotFoundError", "fetching server API"):
        assert internal not in error  # docker-py's words mean nothing to the user


def test_an_engine_that_refuses_is_said_to_be_not_running(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("DOCKER_HOST", "tcp://127.0.0.1:9")
    result = runner.invoke(app, ["sandbox", "check"])
    assert result.exit_code == 3
    assert "the connection was refused (the engine is not running)" in result.stderr


# -- bad input: exit 2, the file and line named, before anything runs -----------------------------


@pytest.fixture
def no_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Anything that tried to run would exit 3: an exit 2 proves the input was refused first."""
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")


def _verify(*args: str) -> Result:
    return runner.invoke(app, ["verify", *args])


@pytest.mark.parametrize("value", ["1e10", "nan", "inf", "-inf", "-1", "0", "3600.5", "abc"])
@pytest.mark.parametrize("where", ["option", "env"])
@pytest.mark.usefixtures("no_engine")
def test_a_timeout_out_of_range_is_bad_input(
    where: str, value: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = [str(BUG_TYPES / "canonical.py"), "--tests", str(BUG_TYPES / "tests.py")]
    if where == "option":
        args += ["--timeout", value]
    else:
        monkeypatch.setenv("GUARDRAIL_TIMEOUT", value)
    result = _verify(*args)
    assert result.exit_code == 2, result.output
    assert "--timeout" in result.stderr
    assert "GUARDRAIL_TIMEOUT" in result.stderr
    assert "Traceback" not in result.output


@pytest.mark.usefixtures("no_engine")
def test_a_huge_tests_file_is_the_tests_files_error(tmp_path: Path) -> None:
    from guardrail.spec import MAX_SPEC_BYTES

    tests = tmp_path / "tests.py"
    with tests.open("wb") as handle:  # 50 MB, sparse: costs no disk and is never read
        handle.truncate(50 << 20)
    result = _verify(str(BUG_TYPES / "canonical.py"), "--tests", str(tests))
    assert result.exit_code == 2, result.output
    assert f"{tests}: the tests file takes 52,428,800 bytes" in result.stderr
    assert f"{MAX_SPEC_BYTES:,}" in result.stderr


@pytest.mark.usefixtures("no_engine")
def test_a_huge_code_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    from guardrail.precheck import MAX_CODE_BYTES

    code = tmp_path / "huge.py"
    with code.open("wb") as handle:
        handle.truncate(100 << 20)
    result = _verify(str(code), "--tests", str(BUG_TYPES / "tests.py"))
    assert result.exit_code == 2, result.output
    assert f"{code}: the file takes 104,857,600 bytes" in result.stderr
    assert f"{MAX_CODE_BYTES:,}" in result.stderr


@pytest.mark.usefixtures("no_engine")
def test_tests_that_crash_the_parser_are_bad_input(tmp_path: Path) -> None:
    tests = tmp_path / "tests.py"
    tests.write_text("assert f(" + "-" * 200_000 + "1) == 1\n")
    result = _verify(str(BUG_TYPES / "canonical.py"), "--tests", str(tests))
    assert result.exit_code == 2, result.output
    assert f"{tests}: tests do not parse: too deeply nested" in result.stderr


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "snippets.jsonl: no candidates: the file has no JSON lines"),
        ("\n  \n", "snippets.jsonl: no candidates: the file has no JSON lines"),
        ("[1, 2]\n", "snippets.jsonl:1: expected a JSON object, got a list"),
        ('{"code": "x = 1"}\n"code"\n', "snippets.jsonl:2: expected a JSON object, got a string"),
        ("null\n", "snippets.jsonl:1: expected a JSON object, got null"),
        ("[" * 100_000 + "]" * 100_000 + "\n", "snippets.jsonl:1: not valid JSON: nested too"),
    ],
    ids=["empty", "blank", "list", "string", "null", "nested"],
)
@pytest.mark.usefixtures("no_engine")
def test_jsonl_that_is_not_candidates_names_the_file_and_line(
    tmp_path: Path, content: str, message: str
) -> None:
    snippets = tmp_path / "snippets.jsonl"
    snippets.write_text(content)
    result = _verify(str(snippets), "--tests", str(BUG_TYPES / "tests.py"))
    assert result.exit_code == 2, result.output
    assert message in result.stderr
    assert "_SnippetLine" not in result.output


@pytest.mark.usefixtures("no_engine")
def test_a_snippet_over_the_sandbox_limit_is_refused_with_its_line(tmp_path: Path) -> None:
    from guardrail.precheck import MAX_CODE_BYTES

    snippets = tmp_path / "snippets.jsonl"
    rows = [{"code": "def f():\n    return 1\n"}, {"code": "x = 1\n" + "#" * MAX_CODE_BYTES}]
    snippets.write_text("".join(json.dumps(row) + "\n" for row in rows))
    result = _verify(str(snippets), "--tests", str(BUG_TYPES / "tests.py"))
    assert result.exit_code == 2, result.output
    assert f"{snippets}:2: code: the candidate takes" in result.stderr
    assert f"{MAX_CODE_BYTES:,}" in result.stderr


# -- warnings and internal errors ------------------------------------------------------------------


@pytest.mark.docker
def test_an_unusable_cache_is_one_warning_line_and_the_verdicts_stand(
    docker_sandbox: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "not-a-dir").write_text("a file where the cache dir should be")
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "not-a-dir"))
    files = [str(BUG_TYPES / "canonical.py"), str(BUG_TYPES / "wrong_operator.py")]
    result = _verify(*files, "--tests", str(BUG_TYPES / "tests.py"), "--json")
    assert result.exit_code == 0, result.output
    assert [row["status"] for row in json.loads(result.stdout)] == ["verified", "failed"]
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1, result.stderr
    assert "not-a-dir" in warnings[0] and "uncached" in warnings[0]


def _crash(paths: object) -> NoReturn:
    raise RuntimeError("a bug in guardrail")


@pytest.mark.parametrize("debug", ["none", "option", "env"])
@pytest.mark.usefixtures("no_engine")
def test_an_internal_error_exits_70_with_one_line(
    debug: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A bug cannot be produced on purpose from outside, so one is planted where input is read.
    monkeypatch.setattr("guardrail.cli.verify.read_candidates", _crash)
    args = ["verify", str(BUG_TYPES / "canonical.py"), "--tests", str(BUG_TYPES / "tests.py")]
    if debug == "option":
        args.insert(0, "--debug")
    elif debug == "env":
        monkeypatch.setenv("GUARDRAIL_DEBUG", "1")
    result = runner.invoke(app, args)
    assert result.exit_code == 70, result.output
    errors = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert errors == ["error: internal error: RuntimeError: a bug in guardrail"]
    assert "please report" in result.stderr
    assert ("Traceback (most recent call last)" in result.stderr) is (debug != "none")


@pytest.mark.docker
def test_a_corrupt_cache_costs_one_run_one_warning_and_then_nothing(
    docker_sandbox: object, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cache_dir = tmp_path / "cache"
    cache_dir.mkdir()
    (cache_dir / "verdicts.sqlite").write_bytes(b"\x13garbage, not SQLite" * 100)
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(cache_dir))
    args = [str(BUG_TYPES / "canonical.py"), "--tests", str(BUG_TYPES / "tests.py"), "--json"]
    first, second = _verify(*args), _verify(*args)
    for result in (first, second):
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)[0]["status"] == "verified"
    warned = [line for line in first.stderr.splitlines() if line.startswith("warning:")]
    assert len(warned) == 1 and "corrupt" in warned[0], first.stderr
    assert "warning:" not in second.stderr
    assert json.loads(second.stdout)[0]["cached"] is True  # the new cache works
    assert len(list(cache_dir.glob("verdicts.sqlite.corrupt-*"))) == 1
