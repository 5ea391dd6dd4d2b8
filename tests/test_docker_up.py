"""``scripts/docker-up`` registers gVisor with a running engine without clobbering or restarting it.

Runs against a private dockerd of its own (own socket, data-root, exec-root, pidfile, config, no
bridge, no iptables), never the shared engine: the script sends the engine SIGHUP.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from guardrail.sandbox.image import default_image

pytestmark = pytest.mark.docker

DOCKER_UP = Path(__file__).resolve().parent.parent / "scripts" / "docker-up"
OTHER_RUNTIME = {"path": "/usr/bin/runc", "runtimeArgs": ["--debug"]}


def _unavailable(reason: str) -> None:
    message = f"cannot start a private Docker engine: {reason}"
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(f"{message} (skipped because CI is unset: developer laptop only)")


class Engine:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.config = root / "daemon.json"
        self.pidfile = root / "docker.pid"
        self.env = {
            **os.environ,
            "DOCKER_HOST": f"unix://{root}/docker.sock",
            "GUARDRAIL_DAEMON_JSON": str(self.config),
            "GUARDRAIL_DOCKERD_PIDFILE": str(self.pidfile),
        }

    def docker(
        self, *args: str, stdin: IO[bytes] | None = None
    ) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["docker", *args],
            env=self.env,
            stdin=stdin,
            capture_output=True,
            text=True,
            check=False,
        )

    def runtimes(self) -> dict[str, object]:
        out = self.docker("info", "--format", "{{json .Runtimes}}").stdout
        return dict(json.loads(out))

    def docker_up(self, **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            ["bash", str(DOCKER_UP)],
            env={**self.env, **env},
            capture_output=True,
            text=True,
            check=False,
            timeout=600,
        )


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    """A private dockerd whose config already holds a key and another runtime to keep."""
    if os.geteuid() != 0 or not shutil.which("dockerd"):
        _unavailable("needs root and dockerd")
    if subprocess.run(
        ["docker", "image", "inspect", default_image()], check=False, capture_output=True
    ).returncode:
        _unavailable(f"the shared engine has no {default_image()} to copy (run scripts/docker-up)")
    root = Path(tempfile.mkdtemp(prefix="gr-up-", dir="/tmp"))  # short: socket paths are capped
    engine = Engine(root)
    engine.config.write_text(json.dumps({"debug": False, "runtimes": {"other": OTHER_RUNTIME}}))
    command = ["dockerd", "--host", engine.env["DOCKER_HOST"], "--data-root", f"{root}/data"]
    command += ["--exec-root", f"{root}/x", "--pidfile", str(engine.pidfile)]
    command += ["--config-file", str(engine.config), "--bridge=none", "--iptables=false"]
    with (root / "dockerd.log").open("wb") as log:
        dockerd = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while engine.docker("info").returncode:
            if dockerd.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"private dockerd did not start: {(root / 'dockerd.log').read_text()}")
            time.sleep(0.2)
        # The image comes from the shared engine rather than a 30-60 s debootstrap.
        save = subprocess.Popen(["docker", "save", default_image()], stdout=subprocess.PIPE)
        loaded = engine.docker("load", stdin=save.stdout)
        save.wait()
        assert loaded.returncode == 0, loaded.stderr
        yield engine
    finally:
        dockerd.terminate()
        try:
            dockerd.wait(timeout=30)
        except subprocess.TimeoutExpired:
            dockerd.kill()
            dockerd.wait()
        subprocess.run(["rm", "-rf", str(root)], check=False)


def test_runsc_is_registered_by_sighup_keeping_the_config_and_the_engine(engine: Engine) -> None:
    pid = engine.pidfile.read_text().strip()
    assert "runsc" not in engine.runtimes()
    result = engine.docker_up(GUARDRAIL_RUNTIMES="runsc")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == default_image()
    config = json.loads(engine.config.read_text())
    assert config["debug"] is False
    assert config["runtimes"]["other"] == OTHER_RUNTIME
    assert config["runtimes"]["runsc"] == {
        "path": "/usr/bin/runsc",
        "runtimeArgs": ["--network=none"],
    }
    assert {"runc", "other", "runsc"} <= set(engine.runtimes())
    assert engine.pidfile.read_text().strip() == pid, "the engine was reloaded, not restarted"
    run = engine.docker(
        "run", "--rm", "--runtime", "runsc", "--network", "none", default_image(), "python3", "-V"
    )
    assert run.returncode == 0, run.stderr  # without --network=none runsc refuses it here

    again = engine.docker_up(GUARDRAIL_RUNTIMES="runsc")
    assert again.returncode == 0, again.stderr
    assert json.loads(engine.config.read_text()) == config
    assert "reloaded" not in again.stderr  # idempotent: nothing to do the second time


def test_an_unknown_runtime_is_refused(engine: Engine) -> None:
    result = engine.docker_up(GUARDRAIL_RUNTIMES="kata")
    assert result.returncode == 2
    assert "unknown runtime kata in GUARDRAIL_RUNTIMES (known: runsc)" in result.stderr


def test_a_broken_daemon_config_is_reported_and_left_alone(engine: Engine, tmp_path: Path) -> None:
    broken = tmp_path / "daemon.json"
    broken.write_text('{"runtimes": ')
    # An engine that does not answer yet: the config is read before one would be started.
    result = engine.docker_up(
        GUARDRAIL_RUNTIMES="runsc",
        GUARDRAIL_DAEMON_JSON=str(broken),
        DOCKER_HOST="unix:///nonexistent/docker.sock",
    )
    assert result.returncode == 2, result.stderr
    assert f"{broken}: not valid JSON" in result.stderr
    assert broken.read_text() == '{"runtimes": '
