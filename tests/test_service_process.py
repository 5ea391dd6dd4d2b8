"""`guardrail serve` as a process: the command, its token file, its logs, and SIGTERM.

The server is the real command (``python -c 'from guardrail.cli.app import main; main()'
serve ...``) on the shared engine; only its own containers are counted (by their owner label,
which holds the server's pid). Also: the client imports nothing heavy, and a bad setting is exit
2 before anything is bound, written or started.
"""

from __future__ import annotations

import ast
import json
import os
import signal
import stat
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.client import RemoteGate
from guardrail.errors import InputError
from guardrail.sandbox.docker import OWNER_LABEL
from guardrail.service.auth import resolve_token
from guardrail.spec import Spec
from guardrail.verdict import Status

_GUARDRAIL = "from guardrail.cli.app import main; main()"
TOKEN = "process-token-0123456789abcdef"
SPEC = Spec.from_tests(["assert square(3) == 9"])


def slow(seconds: float, n: int) -> str:
    return f"import time\n\ndef square(x):\n    time.sleep({seconds})  # {n}\n    return x * x\n"


class ServeProcess:
    """A ``guardrail serve`` subprocess and the JSON lines it logs."""

    def __init__(self, tmp_path: Path, *options: str) -> None:
        env = {**os.environ, "GUARDRAIL_CACHE_DIR": str(tmp_path / "cache"),
               "XDG_CONFIG_HOME": str(tmp_path / "config")}  # fmt: skip
        env.pop("GUARDRAIL_TOKEN", None)
        command = [sys.executable, "-c", _GUARDRAIL, "serve", "--port", "0", *options]
        self.process = subprocess.Popen(
            command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self.url = ""
        ready = threading.Event()

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                self.lines.append(line)
                if '"event": "listening"' in line:
                    self.url = json.loads(line)["url"]
                    ready.set()
            ready.set()

        threading.Thread(target=read, daemon=True).start()
        assert ready.wait(120), "guardrail serve did not start listening within 120 s"
        assert self.url, "".join(self.lines)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines if line.startswith("{")]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(60)


@pytest.fixture
def serve_process(tmp_path: Path, docker_sandbox: object) -> Iterator[Any]:
    started: list[ServeProcess] = []

    def start(*options: str) -> ServeProcess:
        started.append(ServeProcess(tmp_path, *options))
        return started[-1]

    yield start
    for process in started:
        process.stop()


def _own_containers(pid: int) -> list[str]:
    import docker

    client = docker.from_env()
    try:
        found = client.api.containers(all=True, filters={"label": OWNER_LABEL})
        return [c["Id"] for c in found if f":{pid}:" in c["Labels"][OWNER_LABEL]]
    finally:
        client.close()


@pytest.mark.docker
def test_sigterm_drains_the_request_in_flight_then_removes_every_container(
    serve_process: Any,
) -> None:
    server = serve_process("--pool-size", "2", "--no-cache", "--token", TOKEN)
    remote = RemoteGate(server.url, token=TOKEN)
    deadline = time.monotonic() + 120
    # The pool warms up at start; a slot counts as live from the moment its container is
    # being created, so the engine may list it a moment later.
    while remote.health().pool.live != 2 or len(_own_containers(server.process.pid)) != 2:
        assert time.monotonic() < deadline, "the pool never started"
        time.sleep(0.1)
    answers: list[Any] = []
    codes = [slow(1.0, n) for n in range(4)]
    thread = threading.Thread(target=lambda: answers.append(remote.verify(codes, SPEC)))
    thread.start()
    while remote.health().queue.running != 1:
        time.sleep(0.05)

    server.process.send_signal(signal.SIGTERM)

    thread.join(120)
    assert [[v.status for v in verdicts] for verdicts in answers] == [[Status.VERIFIED] * 4]
    assert server.process.wait(120) in (-signal.SIGTERM, 128 + signal.SIGTERM)
    assert _own_containers(server.process.pid) == []
    events = server.events()
    assert len(events) == len(server.lines)  # every line is one JSON object
    stopped = [e for e in events if e["event"] == "stopped"]
    assert stopped == [stopped[0]]
    assert stopped[0]["containers_removed"] == 2
    requests = [e for e in events if e["event"] == "request" and e["route"] == "/v1/verify"]
    assert requests[0]["status"] == 200
    assert requests[0]["candidates"] == 4
    with pytest.raises(httpx.ConnectError):
        httpx.get(server.url + "/v1/health", headers={"Authorization": f"Bearer {TOKEN}"})


@pytest.mark.docker
def test_a_token_is_generated_on_first_start_into_a_private_file(
    serve_process: Any, tmp_path: Path
) -> None:
    token_file = tmp_path / "secret" / "token"
    server = serve_process("--pool-size", "1", "--token-file", str(token_file))
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    token = token_file.read_text().strip()
    assert len(token) >= 32
    listening = next(e for e in server.events() if e["event"] == "listening")
    assert listening["token_source"] == "generated"
    assert token not in "".join(server.lines)  # never logged
    assert httpx.get(server.url + "/v1/health").status_code == 401
    assert RemoteGate(server.url, token=token).health().status == "ok"


def test_a_non_loopback_bind_without_a_token_is_refused_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GUARDRAIL_TOKEN", raising=False)
    token_file = tmp_path / "token"
    result = CliRunner().invoke(
        app, ["serve", "--host", "0.0.0.0", "--port", "0", "--token-file", str(token_file)]
    )
    assert result.exit_code == 2, result.output
    assert "refusing to listen" in result.output
    assert not token_file.exists()


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--queue-size", "-1"], "queue_size must be in 0..100000"),
        (["--deadline", "nan"], "deadline_s must be a number of seconds"),
        (["--token", "short"], "at least 16 printable characters"),
        (["--log-level", "loud"], "--log-level must be"),
        (["--path", "/tmp/x", "--chroma-url", "http://127.0.0.1:1"], "not both"),
    ],
)
def test_bad_settings_are_exit_2_naming_them(options: list[str], message: str) -> None:
    result = CliRunner().invoke(app, ["serve", "--port", "0", *options])
    assert result.exit_code == 2, result.output
    assert message in result.output


def test_a_token_file_others_can_read_is_refused(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("a" * 32)
    token_file.chmod(0o644)
    with pytest.raises(InputError, match="readable or writable by others"):
        resolve_token(None, token_file)


HEAVY = ("chromadb", "torch", "docker", "guardrail_eval", "sentence_transformers", "fastapi",
         "uvicorn", "numpy")  # fmt: skip


def imported_heavy(code: str) -> list[str]:
    """The `HEAVY` packages a fresh interpreter holds after running ``code``."""
    probe = f"{code}\nprint(sorted({{m.split('.')[0] for m in sys.modules}} & set({HEAVY!r})))"
    found = subprocess.run(
        [sys.executable, "-c", f"import sys\n{probe}"], capture_output=True, text=True, check=True
    )
    return list(ast.literal_eval(found.stdout.strip().splitlines()[-1]))


def test_the_client_imports_neither_chromadb_torch_docker_nor_the_eval() -> None:
    assert imported_heavy("import guardrail.client") == []
    assert imported_heavy("import guardrail") == []  # its names load on first use


@pytest.mark.parametrize("command", ["search", "verify"])
def test_a_server_command_imports_nothing_the_server_holds(command: str, tmp_path: Path) -> None:
    (tmp_path / "code.py").write_text("def f():\n    return 1\n", encoding="utf-8")
    (tmp_path / "tests.json").write_text('["assert f() == 1"]', encoding="utf-8")
    arguments = {
        "search": ["search", "--collection", "code-here", "a query"],
        "verify": ["verify", str(tmp_path / "code.py"), "--tests", str(tmp_path / "tests.json")],
    }[command]
    run = (
        "from guardrail.cli.app import main\n"
        f"sys.argv = ['guardrail', *{arguments!r}, '--server', 'http://127.0.0.1:9']\n"
        "try:\n    main()\nexcept SystemExit as exit:\n    assert exit.code == 3, exit.code"
    )  # port 9 answers nothing: exit 3, after every import the command makes
    assert imported_heavy(run) == []


def test_a_request_the_server_would_refuse_is_bad_input_before_it_is_sent() -> None:
    result = CliRunner().invoke(
        app, ["search", "--server", "http://127.0.0.1:9", "--collection", "x", "a query"]
    )
    assert result.exit_code == 2, result.output
    assert "the request cannot be sent: collection:" in " ".join(result.output.split())
