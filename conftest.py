"""Fixtures shared by every test tree (core, eval, integrations).

Tests that need Docker use the ``docker_sandbox`` or ``gate`` fixtures. When no engine or image is
available they fail loudly under CI (``CI`` set); on a developer laptop they skip with the reason.
Tests that must hold under every isolation layer (the hostile suite, ``sandbox check``) take
``sandbox_runtime`` instead: they run once under runc and once under gVisor's runsc, and a runtime
the engine lacks fails or skips the same way.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrail.cache import VerdictCache
from guardrail.gate import Gate

# Every container runtime the sandbox is proven under; scripts/docker-up registers runsc.
RUNTIMES = ("runc", "runsc")


def _unavailable(reason: str) -> None:
    message = f"Docker sandbox unavailable: {reason}. Run `scripts/docker-up` first."
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(f"{message} (skipped because CI is unset: developer laptop only)")


@pytest.fixture(scope="session")
def docker_sandbox() -> Iterator[object]:
    """One real `DockerSandbox` (pool of hardened containers) shared by the whole session."""
    from guardrail.errors import SandboxError
    from guardrail.sandbox.docker import DockerSandbox

    try:
        sandbox = DockerSandbox(pool_size=2)
        sandbox.check_ready()
    except SandboxError as exc:
        _unavailable(str(exc))
    yield sandbox
    sandbox.close()


@pytest.fixture(scope="session", params=RUNTIMES)
def sandbox_runtime(request: pytest.FixtureRequest) -> str:
    """The name of a container runtime the engine has and the sandbox starts under; one per run."""
    from guardrail.errors import SandboxError
    from guardrail.sandbox.docker import DockerSandbox

    runtime = str(request.param)
    try:
        with DockerSandbox(pool_size=1, runtime=runtime) as sandbox:
            sandbox.check_ready()
    except SandboxError as exc:
        _unavailable(f"{exc} ({exc.hint})" if exc.hint else str(exc))
    return runtime


@pytest.fixture
def gate(docker_sandbox: object, tmp_path: Path) -> Iterator[Gate]:
    """A `Gate` over the session's Docker sandbox with a fresh, private verdict cache."""
    from guardrail.sandbox.docker import DockerSandbox

    assert isinstance(docker_sandbox, DockerSandbox)
    cache = VerdictCache(tmp_path / "verdicts.sqlite")
    yield Gate(docker_sandbox, cache=cache)
    cache.close()


# -- Chroma server and the offline embedding (guardrail.index) ---------------------------------


@pytest.fixture(scope="session")
def chroma_server_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real ``chroma run`` server on a free localhost port for the session; yields its URL."""
    import socket
    import subprocess
    import sys
    import time

    import httpx

    chroma = Path(sys.executable).with_name("chroma")
    if not chroma.exists():
        pytest.fail(f"{chroma} is missing; install the core (`pip install -e .`)", pytrace=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    workdir = tmp_path_factory.mktemp("chroma-server")
    log = (workdir / "server.log").open("wb")
    command = [str(chroma), "run", "--path", str(workdir / "data")]
    command += ["--host", "127.0.0.1", "--port", str(port)]
    # cwd: Chroma reads a `.env` from the working directory; keep the repository's out of it.
    server = subprocess.Popen(command, cwd=workdir, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    try:
        while True:
            try:
                if httpx.get(f"{url}/api/v2/heartbeat", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if server.poll() is not None or time.monotonic() > deadline:
                log.flush()
                output = (workdir / "server.log").read_text(errors="replace")[-2000:]
                pytest.fail(f"`chroma run` did not answer on {url}:\n{output}", pytrace=False)
            time.sleep(0.1)
        yield url
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.close()


@pytest.fixture(scope="session")
def minilm() -> object:
    """The offline all-MiniLM-L6-v2 embedding function, loaded once for the whole session."""
    from guardrail.index import minilm_embedding

    function = minilm_embedding()
    function.load()
    return function
