"""Fixtures shared by every test tree (core, eval, integrations).

Tests that need Docker use the ``docker_sandbox`` or ``gate`` fixtures. When no engine or image is
available they fail loudly under CI (``CI`` set); on a developer laptop they skip with the reason.
Tests that must hold under every isolation layer (the hostile suite, ``sandbox check``) take
``sandbox_runtime`` instead: they run once under runc and once under gVisor's runsc, and a runtime
the engine lacks fails or skips the same way.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from guardrail.cache import VerdictCache
from guardrail.client import RemoteGate
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


# -- A second Docker engine of the test's own, for tests that kill, stop or fill an engine -------


class SecondEngine:
    """A private ``dockerd`` (own socket, data, exec root and pidfile, no networking) that a test
    may stop, restart and whose containers it may kill: the shared engine is never touched.

    gVisor's ``runsc``, when installed, is registered as ``scripts/docker-up`` registers it with
    the shared engine (``--network=none``, through a daemon config of the engine's own), so a
    test can run the sandbox under either runtime there; ``runc`` stays the default.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.socket = root / "docker.sock"
        self.url = f"unix://{self.socket}"
        self.image = ""
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        import docker

        command = [
            "dockerd",
            f"--host={self.url}",
            f"--data-root={self.root / 'data'}",
            f"--exec-root={self.root / 'exec'}",
            f"--pidfile={self.root / 'docker.pid'}",
            "--bridge=none",
            "--iptables=false",
            "--ip-masq=false",
        ]
        runsc = shutil.which("runsc")
        if runsc is not None:
            config = self.root / "daemon.json"
            runtime = {"path": runsc, "runtimeArgs": ["--network=none"]}
            config.write_text(json.dumps({"runtimes": {"runsc": runtime}}))
            command.append(f"--config-file={config}")
        log = (self.root / "dockerd.log").open("ab")
        self._process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
        log.close()
        deadline = time.monotonic() + 60
        while True:
            try:
                docker.DockerClient(base_url=self.url).ping()
            except Exception:  # not answering yet; the deadline decides
                if self._process.poll() is not None or time.monotonic() > deadline:
                    tail = (self.root / "dockerd.log").read_text(errors="replace")[-2000:]
                    pytest.fail(f"the second dockerd did not start:\n{tail}", pytrace=False)
                time.sleep(0.2)
            else:
                return

    def stop(self) -> None:
        """Stop the engine (SIGTERM, as an outage or a restart would); its containers die."""
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None

    def client(self) -> Any:
        import docker

        return docker.DockerClient(base_url=self.url)

    def labelled(self, owner: str | None = None) -> list[str]:
        """Ids of the sandbox containers on this engine (of one owner when given)."""
        label = f"guardrail.owner={owner}" if owner else "guardrail.sandbox"
        client = self.client()
        try:
            return [c["Id"] for c in client.api.containers(all=True, filters={"label": label})]
        finally:
            client.close()


@pytest.fixture(scope="session")
def second_engine(docker_sandbox: object) -> Iterator[SecondEngine]:
    """A second dockerd for the session, with the shared engine's sandbox image loaded into it."""
    import tempfile

    from guardrail.sandbox.docker import DockerSandbox

    assert isinstance(docker_sandbox, DockerSandbox)
    if shutil.which("dockerd") is None or os.geteuid() != 0:
        _unavailable("a second engine needs `dockerd` and root")
    # A short path: unix socket paths are limited to 107 bytes.
    engine = SecondEngine(Path(tempfile.mkdtemp(prefix="gr-engine-", dir="/tmp")))
    engine.start()
    try:
        # Copied the way a cluster's nodes get it: `guardrail sandbox export|import`.
        from guardrail.sandbox.image import export_image, import_image

        image = docker_sandbox.image
        archive = engine.root / "image.tar"
        exported = export_image(image, archive)
        client = engine.client()
        try:
            assert import_image(archive, client=client) == [exported]
        finally:
            client.close()
        archive.unlink()
        engine.image = image
        yield engine
    finally:
        engine.stop()
        shutil.rmtree(engine.root, ignore_errors=True)


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


@pytest.fixture
def isolated_cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, minilm: object) -> None:
    """CLI runs with a private index and cache under ``tmp_path``, no server or collection from
    the environment, the session's MiniLM already loaded, and tables wide enough to read whole."""
    from guardrail.cli.common import console

    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("GUARDRAIL_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.delenv("GUARDRAIL_CHROMA_URL", raising=False)
    monkeypatch.delenv("GUARDRAIL_COLLECTION", raising=False)
    monkeypatch.setattr(console, "width", 250)


@pytest.fixture(scope="session")
def minilm() -> object:
    """The offline all-MiniLM-L6-v2 embedding function, loaded once for the whole session."""
    from guardrail.index import minilm_embedding

    function = minilm_embedding()
    function.load()
    return function


HOST_FILE_TEXT = "HOST-FILE-CONTENT-8d1f0c"
"""What the host files outside a `hostile_tree` hold: it must never be read, stored or shipped."""


@pytest.fixture
def host_file_text() -> str:
    """`HOST_FILE_TEXT`, for test modules (importing ``conftest`` by name would find whichever
    of the suite's conftest modules was imported last)."""
    return HOST_FILE_TEXT


@pytest.fixture
def hostile_tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A copy of tests/snippets/hostile/indexed_tree with its hostile files planted (see its
    README): links out of and inside the tree, a FIFO, a socket, a bomb, a 1,100-level folder,
    a huge file and a 12,000-example docstring. Returns the tree's root (``treepkg`` is in it)."""
    import socket

    root = tmp_path / "hostile"
    shutil.copytree(Path(__file__).parent / "tests" / "snippets" / "hostile" / "indexed_tree", root)
    package = root / "treepkg"
    host = tmp_path / "host"  # outside the tree
    (host / "folder").mkdir(parents=True)
    (host / "secret.py").write_text(f"TEXT = {HOST_FILE_TEXT!r}\n")
    (host / "folder" / "mod.py").write_text(f"def mod():\n    return {HOST_FILE_TEXT!r}\n")
    (package / "secret.py").symlink_to(host / "secret.py")
    (package / "linked").symlink_to(host / "folder", target_is_directory=True)
    (package / "inlink.py").symlink_to("inside.py")
    (package / "zero.py").symlink_to("/dev/zero")
    (package / "loop.py").symlink_to("loop.py")
    os.mkfifo(package / "fifo.py")
    with monkeypatch.context() as here, socket.socket(socket.AF_UNIX) as listening:
        here.chdir(package)  # a socket's path is limited to 108 bytes: bind it relative
        listening.bind("sock.py")
    (package / "bomb.py").write_text("x = " + "-" * 200_000 + "1\n")
    (package / "huge.py").write_text("TEXT = '" + "a" * (2 << 20) + "'\n")
    examples = "".join(f"    >>> size({i})\n    {i}\n" for i in range(12_000))
    (package / "many.py").write_text(f'def size(x):\n    """\n{examples}    """\n    return x\n')
    folder = os.open(package, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(1_100):  # deeper than PATH_MAX allows by name: made through descriptors
        os.mkdir("d", dir_fd=folder)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=folder)
        os.close(folder)
        folder = below
    bottom = os.open("bottom.py", os.O_WRONLY | os.O_CREAT, dir_fd=folder)
    os.write(bottom, b"def bottom():\n    return 1\n")
    os.close(bottom)
    os.close(folder)
    yield root
    _flatten_deep_folder(package)


def _flatten_deep_folder(parent: Path) -> None:
    """Remove ``parent/d/d/...`` a level at a time (``shutil.rmtree`` recurses once a level, past
    Python's recursion limit): the folder below the top one moves up and takes its place."""
    top = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    try:
        while True:
            below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=top)
            try:
                if "d" not in os.listdir(below):
                    os.unlink("bottom.py", dir_fd=below)
                    break
                os.rename("d", "d.up", src_dir_fd=below, dst_dir_fd=top)
            finally:
                os.close(below)
            os.rmdir("d", dir_fd=top)
            os.rename("d.up", "d", src_dir_fd=top, dst_dir_fd=top)
        os.rmdir("d", dir_fd=top)
    finally:
        os.close(top)


# -- guardrail serve, started in this process on loopback or a unix socket ----------------------

SERVICE_TOKEN = "test-token-0123456789abcdef"  # noqa: S105 - a test service's, no secret
"""The bearer token of every service `start_service` starts."""


class RunningService:
    """A real `guardrail serve` app (uvicorn, the real gate) on a thread of this process."""

    def __init__(self, gate: Gate, settings: Any, token: str = SERVICE_TOKEN) -> None:
        self.gate = gate
        self.settings = settings
        self.token = token
        self.app: Any = None
        self._server: Any = None
        self._thread: Any = None

    def start(self) -> RunningService:
        import dataclasses
        import threading

        import httpx
        import uvicorn

        from guardrail.service.app import create_app
        from guardrail.service.server import bind

        listening = bind(self.settings)
        listening.listen(128)
        if self.settings.socket is None:
            self.settings = dataclasses.replace(self.settings, port=listening.getsockname()[1])
        self.app = create_app(self.gate, self.settings, self.token)
        config = uvicorn.Config(self.app, log_config=None, lifespan="on", access_log=False)
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(
            target=self._server.run, kwargs={"sockets": [listening]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 60
        while not self._server.started:
            assert self._thread.is_alive(), "the service thread died while starting"
            assert time.monotonic() < deadline, "the service did not start within 60 s"
            time.sleep(0.02)
        self.http = httpx.Client(
            base_url=self.base_url,
            transport=httpx.HTTPTransport(uds=str(self.settings.socket))
            if self.settings.socket
            else None,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=300,
        )
        return self

    @property
    def url(self) -> str:
        return str(self.settings.where)

    @property
    def base_url(self) -> str:
        return "http://guardrail" if self.settings.socket else self.url

    def client(self, **options: Any) -> RemoteGate:
        options.setdefault("token", self.token)
        return RemoteGate(self.url, **options)

    def stop(self) -> None:
        """Drain and shut down as on SIGTERM: the lifespan closes the gate."""
        if self._server is None:
            return
        self._server.should_exit = True
        self._thread.join(timeout=120)
        self.http.close()
        self._server = None


@pytest.fixture(scope="session")
def start_service() -> Iterator[Any]:
    """``start_service(gate, **settings) -> RunningService``: a service on loopback (port 0)
    or, with ``socket=PATH``, a unix socket; stopped at the end of the session if not before."""
    from guardrail.service.settings import ServiceSettings

    started: list[RunningService] = []

    def start(gate: Gate, **settings: Any) -> RunningService:
        settings.setdefault("port", 0)
        service = RunningService(gate, ServiceSettings(**settings)).start()
        started.append(service)
        return service

    yield start
    for service in started:
        service.stop()


@pytest.fixture(scope="session")
def remote_gate(
    docker_sandbox: object, start_service: Any, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RemoteGate]:
    """A `RemoteGate` to a session service (its own two-container pool, a private cache)."""
    from guardrail.sandbox.docker import DockerSandbox
    from guardrail.service.server import service_gate
    from guardrail.service.settings import ServiceSettings

    cache = VerdictCache(tmp_path_factory.mktemp("remote-gate") / "verdicts.sqlite")
    gate = service_gate(DockerSandbox(pool_size=2), ServiceSettings(), cache=cache)
    service = start_service(gate)
    remote = service.client()
    yield remote
    remote.close()
    service.stop()
    cache.close()
