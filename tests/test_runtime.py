"""The container runtime (runc, gVisor's runsc): chosen by argument, environment or CLI option,
checked against the engine before anything runs, and part of the verdict-cache identity."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.errors import RuntimeNotFoundError
from guardrail.gate import Gate
from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec
from guardrail.verdict import Status

BUG_TYPES = Path(__file__).parent / "snippets" / "bug_types"
SPEC = Spec.from_tests(["assert square(3) == 9"])
runner = CliRunner()


def test_the_runtime_comes_from_the_argument_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GUARDRAIL_RUNTIME", "runsc")
    with DockerSandbox("any-image") as from_env, DockerSandbox("any", runtime="runc") as given:
        assert (from_env.runtime, given.runtime) == ("runsc", "runc")
    monkeypatch.setenv("GUARDRAIL_RUNTIME", "")
    with DockerSandbox("any-image") as default:
        assert default.runtime is None  # the engine's default runtime


@pytest.mark.parametrize("command", ["verify", "search", "eval"])
def test_every_command_that_makes_a_sandbox_takes_runtime(command: str) -> None:
    result = runner.invoke(app, [command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "--runtime" in result.stdout
    assert "GUARDRAIL_RUNTIME" in result.stdout


@pytest.mark.docker
def test_the_runtime_is_part_of_the_identity_and_really_used(sandbox_runtime: str) -> None:
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        assert f"|runtime:{sandbox_runtime}|" in sandbox.identity
        (verdict,) = sandbox.run([Job("def square(x):\n    return x * x\n", SPEC)])
        attrs = sandbox.inspect_live_container()
    assert verdict.status is Status.VERIFIED
    assert attrs["HostConfig"]["Runtime"] == sandbox_runtime


@pytest.mark.docker
def test_an_unknown_runtime_is_refused_before_anything_runs(docker_sandbox: object) -> None:
    sandbox = DockerSandbox(pool_size=1, runtime="no-such-runtime")
    with pytest.raises(RuntimeNotFoundError, match=r"no runtime 'no-such-runtime'; it has: .*runc"):
        Gate(sandbox, cache=False).verify(["def square(x):\n    return x * x\n"], SPEC)
    assert sandbox.stats.containers_started == 0
    sandbox.close()


@pytest.mark.docker
def test_verify_with_an_unknown_runtime_exits_3_naming_the_runtimes(
    docker_sandbox: object, tmp_path: Path
) -> None:
    result = runner.invoke(
        app,
        [
            "verify",
            str(BUG_TYPES / "canonical.py"),
            "--tests",
            str(BUG_TYPES / "tests.py"),
            "--runtime",
            "no-such-runtime",
        ],
        env={"GUARDRAIL_CACHE_DIR": str(tmp_path)},
    )
    assert result.exit_code == 3, result.output
    assert "no runtime 'no-such-runtime'; it has: " in result.stderr
    assert "GUARDRAIL_RUNTIMES=runsc scripts/docker-up" in result.stderr


@pytest.mark.docker
def test_a_fork_bomb_is_stopped_inside_the_container_and_the_sandbox_survives(
    sandbox_runtime: str,
) -> None:
    """Under gVisor the engine's pids limit counts its host tasks (about five per process):
    at the plain limit this fork bomb, held to RLIMIT_NPROC inside, crashed the sandbox kernel."""
    bomb = (Path(__file__).parent / "snippets" / "hostile" / "fork_bomb.py").read_text()
    with DockerSandbox(pool_size=1, timeout_s=1.0, runtime=sandbox_runtime) as sandbox:
        sandbox.grace_s = 60.0  # cleaning up after it is slow under gVisor (see test_hostile)
        verdicts = sandbox.run([Job(bomb, SPEC), Job("def square(x):\n    return x * x\n", SPEC)])
        pids_limit = sandbox.inspect_live_container()["HostConfig"]["PidsLimit"]
        assert sandbox.stats.containers_started == 1, verdicts
    assert [v.status for v in verdicts] == [Status.TIMEOUT, Status.VERIFIED]
    assert pids_limit == sandbox.host_pids_limit() >= sandbox.limits.container_pids
