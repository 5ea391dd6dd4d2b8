"""Faults, shared engines and interrupts, on a second dockerd of the session's own.

Every test here kills, stops or fills an engine, so none of them runs on the shared one: the
`second_engine` fixture (conftest.py) starts a private dockerd with the sandbox image loaded.
"""

from __future__ import annotations

import io
import itertools
import os
import re
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from guardrail.errors import ImageUnusableError, SandboxError
from guardrail.gate import Gate
from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import OWNER_LABEL, DockerSandbox
from guardrail.sandbox.replay import BLAME_AFTER
from guardrail.sandbox.uids import UID_BASE_LABEL, UID_SPAN_LABEL, UidRanges
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

if TYPE_CHECKING:  # the root conftest: imported at run time, any tree's conftest could answer
    from conftest import SecondEngine

pytestmark = pytest.mark.docker

SNIPPETS = Path(__file__).parent / "snippets"
SPEC = Spec.from_tests(["assert square(3) == 9", "assert square(-2) == 4"])
GOOD = "def square(x):\n    return x * x\n"
BAD = "def square(x):\n    return x + x\n"
SLOW_GOOD = "import time\n\ndef square(x):\n    time.sleep(0.7)\n    return x * x\n"
KILLER = (SNIPPETS / "faults" / "gets_its_container_killed.py").read_text()
KILLER_NAME = "gr-kill-my-box"


@pytest.fixture
def engine(second_engine: SecondEngine) -> Iterator[SecondEngine]:
    yield second_engine
    # Nothing a test started may outlive it (each test removes its own; this catches failures).
    client = second_engine.client()
    for container_id in second_engine.labelled():
        client.api.remove_container(container_id, force=True)
    client.close()


def _sandbox(engine: SecondEngine, **options: Any) -> DockerSandbox:
    options.setdefault("pool_size", 1)
    return DockerSandbox(engine.image, client=engine.client(), **options)


def _container_ids(sandbox: DockerSandbox, *, running: bool = False) -> list[str]:
    """The containers of ``sandbox`` on its engine (only the running ones if ``running``)."""
    client = sandbox.client
    filters = {"label": f"{OWNER_LABEL}={sandbox.owner}"}
    return [c["Id"] for c in client.api.containers(all=not running, filters=filters)]


class _Killer(threading.Thread):
    """Kills (docker kill, by id) every container of ``sandbox`` that runs a process named
    `KILLER_NAME`: found in the host's /proc, mapped to its container through its cgroup."""

    def __init__(self, sandbox: DockerSandbox) -> None:
        super().__init__(daemon=True)
        self.sandbox = sandbox
        self.kills = 0
        self.done = threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.05):
            ours = set(_container_ids(self.sandbox, running=True))
            for comm in Path("/proc").glob("[0-9]*/comm"):
                try:
                    if comm.read_text().strip() != KILLER_NAME:
                        continue
                    cgroup = (comm.parent / "cgroup").read_text()
                except OSError:
                    continue
                for container_id in ours:
                    if container_id in cgroup:
                        self.sandbox.client.api.kill(container_id)
                        self.kills += 1
                        time.sleep(0.5)  # let the engine record the death before looking again


# -- item 10: a fault is replayed; only a proven killer is blamed ------------------------------


def test_a_container_killed_between_or_during_jobs_costs_no_honest_verdict(
    engine: SecondEngine,
) -> None:
    with _sandbox(engine) as sandbox:
        assert [v.status for v in sandbox.run([Job(GOOD, SPEC)])] == [Status.VERIFIED]
        # Between jobs: the idle container dies; the next batch must not pay for it.
        (idle,) = _container_ids(sandbox)
        sandbox.client.api.kill(idle)
        verdicts = sandbox.run([Job(GOOD, SPEC), Job(BAD, SPEC), Job(GOOD, SPEC)])
        assert [v.status for v in verdicts] == [Status.VERIFIED, Status.FAILED, Status.VERIFIED]
        assert sandbox.stats.faults == 1
        # During a job: kill the container while an honest candidate is running.
        jobs = [Job(SLOW_GOOD, SPEC) for _ in range(4)]
        result: list[Any] = []
        runner = threading.Thread(target=lambda: result.append(sandbox.run(jobs)))
        runner.start()
        time.sleep(1.0)
        for container_id in _container_ids(sandbox, running=True):
            sandbox.client.api.kill(container_id)
        runner.join(timeout=120)
        assert sandbox.stats.faults == 2
        assert [v.status for v in result[0]] == [Status.VERIFIED] * 4
    assert _container_ids(sandbox) == []


def test_only_the_candidate_that_kills_its_container_every_time_is_blamed(
    engine: SecondEngine,
) -> None:
    with _sandbox(engine, timeout_s=20.0) as sandbox:
        killer = _Killer(sandbox)
        killer.start()
        try:
            jobs = [Job(GOOD, SPEC), Job(KILLER, SPEC), Job(GOOD, SPEC), Job(BAD, SPEC)]
            verdicts = sandbox.run(jobs)
        finally:
            killer.done.set()
            killer.join()
    assert [v.status for v in verdicts] == [
        Status.VERIFIED,
        Status.ERROR,
        Status.VERIFIED,
        Status.FAILED,
    ]
    assert verdicts[1].reason is Reason.SANDBOX_FAULT
    assert f"killed {BLAME_AFTER} fresh sandbox containers" in verdicts[1].message
    assert "exit code 137" in verdicts[1].message  # the container's own account
    # Once in the batch, then alone on fresh containers until blamed: reproduced, not guessed.
    assert killer.kills == sandbox.stats.faults == 1 + BLAME_AFTER


# -- item 9: the leftover sweep removes only what is provably dead ------------------------------

_CRASHING_OWNER = """
import os, sys
import docker
from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec

sandbox = DockerSandbox(sys.argv[2], client=docker.DockerClient(base_url=sys.argv[1]), pool_size=1)
sandbox.owner = sys.argv[3]
verdict, = sandbox.run([Job("def f():\\n    return 1\\n", Spec.from_tests(["assert f() == 1"]))])
assert verdict.status == "verified", verdict
os._exit(0)  # a crash: no close, no atexit
"""


def test_a_live_pool_of_another_host_survives_a_new_pools_sweep(engine: SecondEngine) -> None:
    crashed_owner = "ci-runner-9:4242:0ddba11"
    subprocess.run(
        [sys.executable, "-c", _CRASHING_OWNER, engine.url, engine.image, crashed_owner],
        check=True,
        timeout=120,
    )
    # The dead-man's switch: the crashed owner's container stops by itself.
    deadline = time.monotonic() + 30
    client = engine.client()
    while True:
        (dead,) = engine.labelled(crashed_owner)
        if client.api.inspect_container(dead)["State"]["Status"] == "exited":
            break
        assert time.monotonic() < deadline, "a crashed owner's container kept running"
        time.sleep(0.2)
    with _sandbox(engine) as live:
        live.owner = "ci-runner-7:1:feedface"  # another host's live pool on the shared engine
        assert live.run([Job(GOOD, SPEC)])[0].status is Status.VERIFIED
        (live_container,) = engine.labelled(live.owner)
        with _sandbox(engine) as newcomer:
            newcomer.leftover_grace_s = 0.0
            assert newcomer.run([Job(GOOD, SPEC)])[0].status is Status.VERIFIED
        assert engine.labelled(crashed_owner) == [], "the dead container was not removed"
        assert engine.labelled(live.owner) == [live_container]
        assert live.run([Job(GOOD, SPEC)])[0].status is Status.VERIFIED
        assert live.stats.containers_started == 1


# -- item 13: start-up faults, unusable images, a tag that moves ---------------------------------


def test_a_container_that_dies_while_starting_is_retried(engine: SecondEngine) -> None:
    with _sandbox(engine) as sandbox:
        killed: list[str] = []

        def kill_the_first() -> None:
            deadline = time.monotonic() + 60
            while not killed and time.monotonic() < deadline:
                for container_id in _container_ids(sandbox, running=True):
                    sandbox.client.api.kill(container_id)
                    killed.append(container_id)
                time.sleep(0.01)

        killer = threading.Thread(target=kill_the_first)
        killer.start()
        verdicts = sandbox.run([Job(GOOD, SPEC)])
        killer.join()
        assert killed, "the watcher never saw the container"
        assert [v.status for v in verdicts] == [Status.VERIFIED]
        assert killed[0] not in _container_ids(sandbox)


def _commit_with_file(engine: SecondEngine, path: str, content: bytes, tag: str) -> str:
    """A new image: the sandbox image plus one executable file (no build, no registry)."""
    client = engine.client()
    container = client.containers.create(engine.image, ["true"])
    try:
        data = io.BytesIO()
        with tarfile.open(fileobj=data, mode="w") as tar:
            info = tarfile.TarInfo(path.lstrip("/"))
            info.size, info.mode = len(content), 0o755
            tar.addfile(info, io.BytesIO(content))
        container.put_archive("/", data.getvalue())
        repository, _, version = tag.partition(":")
        return str(container.commit(repository=repository, tag=version).id)
    finally:
        container.remove(force=True)


def test_an_image_whose_python_dies_is_reported_with_the_containers_reason(
    engine: SecondEngine,
) -> None:
    script = b"#!/bin/sh\necho broken-python-here >&2\nexit 7\n"
    _commit_with_file(engine, "/usr/local/bin/python3", script, "gr-broken-python:1")
    sandbox = DockerSandbox("gr-broken-python:1", client=engine.client(), pool_size=1)
    with sandbox, pytest.raises(SandboxError) as raised:
        sandbox.run([Job(GOOD, SPEC)])
    message = str(raised.value)
    assert f"failed to start {DockerSandbox.start_attempts} times" in message
    assert "exit code 7" in message
    assert "broken-python-here" in message
    assert sandbox.stats.containers_started == DockerSandbox.start_attempts
    assert _container_ids(sandbox) == []


def test_an_image_without_python3_is_named_as_such(
    engine: SecondEngine, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from guardrail.cli.app import app

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as tar:
        info = tarfile.TarInfo("hello.txt")
        info.size = 3
        tar.addfile(info, io.BytesIO(b"hi\n"))
    subprocess.run(
        ["docker", "-H", engine.url, "import", "-", "gr-no-python:1"],
        input=data.getvalue(),
        check=True,
        capture_output=True,
    )
    sandbox = DockerSandbox("gr-no-python:1", client=engine.client(), pool_size=1)
    with sandbox, pytest.raises(ImageUnusableError, match="image 'gr-no-python:1' has no python3"):
        sandbox.run([Job(GOOD, SPEC)])
    assert _container_ids(sandbox) == []
    # The command line: exit 3, the image named, a hint to build the guardrail image.
    (tmp_path / "good.py").write_text(GOOD)
    (tmp_path / "tests.py").write_text("assert square(3) == 9\n")
    monkeypatch.setenv("DOCKER_HOST", engine.url)
    result = CliRunner().invoke(
        app,
        [
            *("verify", str(tmp_path / "good.py"), "--tests", str(tmp_path / "tests.py")),
            *("--image", "gr-no-python:1", "--no-cache"),
        ],
    )
    assert result.exit_code == 3, result.output
    assert "has no python3 on PATH" in result.output
    assert "guardrail sandbox build" in result.output


def test_verdicts_carry_the_image_that_ran_even_if_the_tag_moves(engine: SecondEngine) -> None:
    client = engine.client()
    original = client.images.get(engine.image)
    original.tag("gr-moving", "1")
    with _sandbox(engine, jobs_per_container=1) as sandbox:
        sandbox.image = "gr-moving:1"
        identity = sandbox.identity
        assert original.id in identity
        assert sandbox.run([Job(GOOD, SPEC)])[0].status is Status.VERIFIED
        moved = _commit_with_file(engine, "/moved.txt", b"x", "gr-moving:1")
        assert moved != original.id
        assert sandbox.run([Job(GOOD, SPEC)])[0].status is Status.VERIFIED  # a new container
        assert sandbox.stats.containers_started == 2
        assert sandbox.inspect_live_container()["Image"] == original.id
        assert sandbox.identity == identity


# -- item 14: engine outages and interrupts leak nothing ---------------------------------------


def test_an_engine_outage_under_a_live_gate_leaks_no_container(
    engine: SecondEngine, tmp_path: Path
) -> None:
    sandbox = _sandbox(engine)
    with Gate(sandbox, cache=False) as gate:
        assert gate.verify([GOOD], SPEC)[0].status is Status.VERIFIED
        engine.stop()
        try:
            with pytest.raises(SandboxError):
                gate.verify([GOOD, BAD], SPEC)
        finally:
            engine.start()
        assert [v.status for v in gate.verify([GOOD, BAD], SPEC)] == [
            Status.VERIFIED,
            Status.FAILED,
        ]
    assert engine.labelled(sandbox.owner) == []


_GUARDRAIL = "from guardrail.cli.app import main; main()"


def _interruptible_command(command: str, tmp_path: Path) -> list[str]:
    """Arguments of a `guardrail` command that keeps two containers busy for a while."""
    if command == "eval":  # the built-in pool, BM25 (no model to load), every candidate judged
        return ["eval", "--system", "bm25", "--no-cache", "--out", str(tmp_path / "out")]
    files = []
    for number in range(6):
        path = tmp_path / f"slow_{number}.py"
        path.write_text(SLOW_GOOD.replace("0.7", "3"))
        files.append(str(path))
    (tmp_path / "tests.py").write_text("assert square(3) == 9\n")
    return ["verify", *files, "--tests", str(tmp_path / "tests.py"), "--no-cache"]


@pytest.mark.parametrize("command", ["verify", "eval"])
@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_an_interrupted_command_removes_its_containers(
    engine: SecondEngine, tmp_path: Path, signum: signal.Signals, command: str
) -> None:
    env = {
        **os.environ,
        "DOCKER_HOST": engine.url,
        "GUARDRAIL_IMAGE": engine.image,
        "GUARDRAIL_POOL_SIZE": "2",
        "GUARDRAIL_CACHE_DIR": str(tmp_path / "cache"),
    }
    arguments = [sys.executable, "-c", _GUARDRAIL, *_interruptible_command(command, tmp_path)]
    process = subprocess.Popen(arguments, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    owner_prefix = f":{process.pid}:"
    deadline = time.monotonic() + 120
    client = engine.client()
    while True:
        ours = [
            c
            for c in client.api.containers(filters={"label": OWNER_LABEL})
            if owner_prefix in c["Labels"][OWNER_LABEL]
        ]
        if len(ours) == 2:
            break
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, f"{command} never started its containers"
        time.sleep(0.1)
    time.sleep(1.0)  # a job is running in each
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 128 + signum, stderr
    last = stderr.decode().strip().splitlines()[-1]
    assert re.fullmatch(r"interrupted: removed [12] sandbox container\(s\)", last), last
    left = [
        c
        for c in client.api.containers(all=True, filters={"label": OWNER_LABEL})
        if owner_prefix in c["Labels"][OWNER_LABEL]
    ]
    assert left == []


# -- uid ranges -----------------------------------------------------------------------------------


def test_uid_ranges_never_overlap_and_avoid_taken_ones() -> None:
    ranges = UidRanges()
    taken = [(200_000_000, 10**9)]  # a quarter of the space belongs to others
    given = [(ranges.allocate(1018, taken), 1018) for _ in range(2000)]
    spans = sorted(given + taken)
    for (base, span), (next_base, _) in itertools.pairwise(spans):
        assert base + span <= next_base
    assert all(base + span - 1 <= 2**32 - 2 for base, span in given)


def test_pools_in_one_process_draw_disjoint_labelled_uid_ranges(engine: SecondEngine) -> None:
    sandboxes = [_sandbox(engine, jobs_per_container=4) for _ in range(4)]
    try:
        ranges = []
        for sandbox in sandboxes:
            assert sandbox.run([Job(GOOD, SPEC)])[0].status is Status.VERIFIED
            (container_id,) = _container_ids(sandbox)
            labels = sandbox.client.api.inspect_container(container_id)["Config"]["Labels"]
            ranges.append((int(labels[UID_BASE_LABEL]), int(labels[UID_SPAN_LABEL])))
        assert all(span >= 2 * (4 + 1) for _, span in ranges)
        ranges.sort()
        for (base, span), (next_base, _) in itertools.pairwise(ranges):
            assert base + span <= next_base
    finally:
        for sandbox in sandboxes:
            sandbox.close()
