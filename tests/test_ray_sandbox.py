"""`RaySandbox` on a real two-node Ray cluster, each node with a private Docker engine of its own.

The cluster (``ray_nodes.py``): nodes on 127.0.0.10 and 127.0.0.11, usage stats off, token
authentication on, a temp dir per run; node A judges on the session's second engine
(``second_engine``), node B on a third private dockerd started here; both got the sandbox image by
`guardrail sandbox export|import`. Faults are made for real: an actor's process is killed
mid-batch, node B's dockerd is frozen with SIGSTOP. Every process is stopped by its pid, never
with ``ray stop``; after every sandbox, no container is left on either engine.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from ray_nodes import RayNodes
from test_hostile import EXPECTED, GOOD, HOSTILE, PROBE, SLOW_UNDER_LOAD, SPEC

from guardrail.errors import SandboxError
from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.image import export_image, import_image, recipe_path
from guardrail.sandbox.raysandbox import RaySandbox
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict

if TYPE_CHECKING:  # conftest is not importable by name at run time (several exist)
    from conftest import SecondEngine

pytestmark = pytest.mark.docker

IPS = ("127.0.0.10", "127.0.0.11")
RUNTIMES = ("runc", "runsc")  # both private engines register gVisor as the shared one does
SQUARE = Spec.from_tests(["assert square(3) == 9", "assert square(-2) == 4"])
HONEST = "def square(x):\n    return x * x\n"
BUGGY = "def square(x):\n    return x + x\n"
SLOW = "import time\n\ndef square(x):\n    time.sleep(0.5)\n    return x * x\n"


@pytest.fixture(scope="module")
def engines(second_engine: SecondEngine) -> Iterator[tuple[SecondEngine, SecondEngine]]:
    """Node A's engine (the session's second) and node B's (started here), same image id."""
    third = type(second_engine)(Path(tempfile.mkdtemp(prefix="gr-engine-", dir="/tmp")))
    third.start()
    try:
        archive = third.root / "image.tar"
        client = second_engine.client()
        try:
            exported = export_image(second_engine.image, archive, client=client)
        finally:
            client.close()
        client = third.client()
        try:
            assert import_image(archive, client=client) == [exported]
        finally:
            client.close()
        archive.unlink()
        third.image = second_engine.image
        yield second_engine, third
    finally:
        third.stop()
        shutil.rmtree(third.root, ignore_errors=True)


@pytest.fixture(scope="module")
def cluster(engines: tuple[SecondEngine, SecondEngine]) -> Iterator[RayNodes]:
    root = Path(tempfile.mkdtemp(prefix="gr-ray-", dir="/tmp"))
    nodes = RayNodes(root, IPS, tuple(engine.url for engine in engines))
    saved = {name: os.environ.get(name) for name in nodes.env()}
    os.environ.update(nodes.env())  # this process is the driver
    try:
        nodes.start()
        yield nodes
    finally:
        nodes.stop()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(root, ignore_errors=True)


def _sandbox(cluster: RayNodes, image: str, **options: object) -> RaySandbox:
    return RaySandbox(cluster.address, node_ip=IPS[0], image=image, pool_size=1, **options)  # type: ignore[arg-type]


def _no_containers_left(engines: tuple[SecondEngine, SecondEngine]) -> None:
    for engine in engines:
        assert engine.labelled() == [], f"containers left on {engine.url}"


def _node(sandbox: RaySandbox, ip: str) -> dict[str, Any]:
    """The node at ``ip`` among `RaySandbox.nodes`: they come in Ray's order (``ray.nodes()``,
    which follows the random node ids), not in the order the cluster started them."""
    (entry,) = [node for node in sandbox.nodes() if node["node"].split()[0] == ip]
    return entry


def _outcome(verdict: Verdict) -> tuple[object, ...]:
    return verdict.status, verdict.reason, tuple(test.outcome for test in verdict.tests)


def test_refuses_a_cluster_without_token_auth(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    with pytest.raises(SandboxError, match="token authentication"):
        RaySandbox("127.0.0.10:1")


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_verdicts_match_docker_sandbox_in_order_across_both_nodes(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine], runtime: str
) -> None:
    jobs = [Job(code, SQUARE) for code in (HONEST, BUGGY, "def square(:\n", SLOW) * 5]
    client = engines[0].client()
    try:
        with DockerSandbox(engines[0].image, client=client, pool_size=1, runtime=runtime) as local:
            expected = [_outcome(verdict) for verdict in local.run(jobs)]
            identity = local.identity
    finally:
        client.close()
    with _sandbox(cluster, engines[0].image, chunk_jobs=3, runtime=runtime) as sandbox:
        assert sandbox.identity == identity
        assert len(sandbox.nodes()) == 2
        got = [_outcome(verdict) for verdict in sandbox.run(jobs)]
        ran = {node["node"].split()[0]: node["jobs_run"] for node in sandbox.nodes()}
    assert got == expected
    assert set(ran) == set(IPS)
    assert all(count > 0 for count in ran.values()), f"a node judged nothing: {ran}"
    _no_containers_left(engines)


@pytest.mark.parametrize("runtime", RUNTIMES)
def test_the_hostile_suite_holds_on_the_cluster(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine], runtime: str
) -> None:
    """As ``test_hostile.py`` holds it on one engine, under runc and under gVisor."""
    jobs = []
    for path in HOSTILE:
        jobs += [Job(path.read_text(), SPEC), Job(GOOD, SPEC), PROBE]
    options = {"timeout_s": 2.0, "chunk_jobs": 6, "runtime": runtime}
    with _sandbox(cluster, engines[0].image, **options) as sandbox:
        assert f"|runtime:{runtime}|" in sandbox.identity
        verdicts = sandbox.run(jobs)
        faults = sum(node["faults"] for node in sandbox.nodes())
    assert faults == 0, "cleanup after every attack must keep the containers"
    for position, path in enumerate(HOSTILE):
        attack, after, probe = verdicts[3 * position : 3 * position + 3]
        assert attack.status is not Status.VERIFIED, (path.stem, attack)
        got = (attack.status, attack.reason)
        if path.stem in EXPECTED and not (
            path.stem in SLOW_UNDER_LOAD and got == (Status.TIMEOUT, Reason.TIMEOUT)
        ):
            assert got == EXPECTED[path.stem], (path.stem, attack)
        assert after.status is Status.VERIFIED, (path.stem, after)
        assert probe.status is Status.VERIFIED, (path.stem, probe)
    _no_containers_left(engines)


def test_an_actor_killed_mid_batch_costs_no_verdict(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine]
) -> None:
    jobs = [Job(SLOW if i % 2 else HONEST, SQUARE) for i in range(16)]
    with _sandbox(cluster, engines[0].image, chunk_jobs=4) as sandbox:
        sandbox.warm_up()
        victim = _node(sandbox, IPS[1])["pid"]
        killer = threading.Timer(1.5, os.kill, (victim, signal.SIGKILL))
        killer.start()
        try:
            verdicts = sandbox.run(jobs)
        finally:
            killer.cancel()
        assert all(verdict.status is Status.VERIFIED for verdict in verdicts), verdicts
        # The actor comes back on its node (a new process) and gets work once its identity is
        # checked again.
        deadline = time.monotonic() + 90
        while not _node(sandbox, IPS[1])["usable"]:
            assert time.monotonic() < deadline, sandbox.nodes()
            after = sandbox.run([Job(HONEST, SQUARE)] * 2)
            assert all(verdict.status is Status.VERIFIED for verdict in after)
            time.sleep(1)
        assert _node(sandbox, IPS[1])["pid"] != victim
    _no_containers_left(engines)


def test_a_frozen_engine_hits_the_deadline_and_the_work_moves(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine]
) -> None:
    frozen = engines[1]
    assert frozen._process is not None
    with _sandbox(cluster, engines[0].image, chunk_jobs=2, deadline_s=10.0) as sandbox:
        sandbox.warm_up()
        os.kill(frozen._process.pid, signal.SIGSTOP)
        try:
            started = time.monotonic()
            verdicts = sandbox.run([Job(HONEST, SQUARE), Job(BUGGY, SQUARE)] * 3)
            took = time.monotonic() - started
            states = {node["node"].split()[0]: node["usable"] for node in sandbox.nodes()}
        finally:
            os.kill(frozen._process.pid, signal.SIGCONT)
    assert [verdict.status for verdict in verdicts] == [Status.VERIFIED, Status.FAILED] * 3
    assert took < 60, f"the deadline did not bound the frozen engine: {took:.0f} s"
    assert states == {IPS[0]: True, IPS[1]: False}
    _no_containers_left(engines)


def test_a_node_with_a_different_image_is_refused_by_name(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine], tmp_path: Path
) -> None:
    """Node A's tag names the real image; node B's the same tag on a rebuilt, different one."""
    tag = f"guardrail-test-other:{uuid.uuid4().hex[:12]}"
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "differs").write_text("a rebuilt image\n")
    env = {**os.environ, "DOCKER_HOST": engines[1].url}
    subprocess.run(
        ["bash", str(recipe_path()), "--pack", str(tmp_path / "tree"), tag],
        env=env,
        check=True,
        capture_output=True,
    )
    client = engines[0].client()
    try:
        client.images.get(engines[0].image).tag(tag)
        with pytest.raises(SandboxError) as refused:
            _sandbox(cluster, tag)
    finally:
        client.images.remove(tag)
        client.close()
        other = engines[1].client()
        other.images.remove(tag)
        other.close()
    message = str(refused.value)
    assert "different identities" in message
    assert IPS[0] in message and IPS[1] in message
    _no_containers_left(engines)


def test_the_cli_judges_on_the_cluster_and_the_doctor_reports_every_node(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine], tmp_path: Path
) -> None:
    from typer.testing import CliRunner

    from guardrail.cli.app import app

    runner = CliRunner()
    (tmp_path / "honest.py").write_text(HONEST)
    (tmp_path / "tests.py").write_text("assert square(3) == 9\n")
    env = {
        "GUARDRAIL_BACKEND": "ray",
        "GUARDRAIL_RAY_ADDRESS": cluster.address,
        "GUARDRAIL_RAY_NODE_IP": IPS[0],
        "GUARDRAIL_IMAGE": engines[0].image,
        "GUARDRAIL_POOL_SIZE": "1",
    }
    verify = [
        *("verify", str(tmp_path / "honest.py"), "--tests", str(tmp_path / "tests.py")),
        *("--no-cache", "--json"),
    ]
    result = runner.invoke(app, verify, env=env)
    assert result.exit_code == 0, result.output
    assert '"verified"' in result.stdout
    result = runner.invoke(app, ["verify", *verify[1:], "--backend", "kubernetes"], env=env)
    assert result.exit_code == 2, result.output
    # The doctor, by its flags rather than the environment.
    flags = ["--backend", "ray", "--ray-address", cluster.address]
    env = {**env, "GUARDRAIL_BACKEND": "", "GUARDRAIL_RAY_ADDRESS": ""}
    result = runner.invoke(app, ["sandbox", "check", "--json", *flags], env=env)
    assert result.exit_code == 0, result.output
    import json

    report = json.loads(result.stdout)
    assert len(report["nodes"]) == 2
    assert all(all(check["ok"] for check in node["checks"]) for node in report["nodes"].values())
    assert {entry["node"].split()[0] for entry in report["placement"]} == set(IPS)
    _no_containers_left(engines)


async def test_health_shows_each_node(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine]
) -> None:
    from guardrail.gate import Gate
    from guardrail.service.admission import Admission
    from guardrail.service.health import health

    with _sandbox(cluster, engines[0].image) as sandbox:
        sandbox.run([Job(HONEST, SQUARE)] * 2)
        report = await health(Gate(sandbox, cache=False), Admission(1, 1, 10.0), "test")
    assert report.status == "ok", report
    assert report.nodes is not None and len(report.nodes) == 2
    assert report.pool.size == 2
    assert report.pool.jobs_run == sum(node.jobs_run or 0 for node in report.nodes) == 2
    _no_containers_left(engines)


def test_serve_judges_on_the_cluster_shows_each_node_and_stops_clean(
    cluster: RayNodes,
    engines: tuple[SecondEngine, SecondEngine],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``guardrail serve --backend ray`` as a process; requests through `RemoteGate`."""
    from test_service_process import ServeProcess

    from guardrail.client import RemoteGate

    token = "ray-serve-token-0123456789abcdef"
    monkeypatch.setenv("GUARDRAIL_RAY_NODE_IP", IPS[0])
    server = ServeProcess(
        tmp_path,
        *("--backend", "ray", "--ray-address", cluster.address, "--image", engines[0].image),
        *("--pool-size", "1", "--no-cache", "--token", token),
    )
    try:
        with RemoteGate(server.url, token=token) as remote:
            codes = [HONEST, BUGGY, "def square(:\n", SLOW] * 2
            verdicts = remote.verify(codes, SQUARE)
            health = remote.health()
        assert [verdict.status for verdict in verdicts] == [
            Status.VERIFIED, Status.FAILED, Status.ERROR, Status.VERIFIED
        ] * 2  # fmt: skip
        assert health.status == "ok", health
        assert health.nodes is not None
        assert {node.node.split()[0] for node in health.nodes} == set(IPS)
        assert all(node.usable and node.pool_size == 1 for node in health.nodes), health.nodes
        assert {node.docker_host for node in health.nodes} == {engine.url for engine in engines}
        assert health.pool.size == 2
        assert health.pool.jobs_run == sum(node.jobs_run or 0 for node in health.nodes) > 0
        server.process.send_signal(signal.SIGTERM)
        assert server.process.wait(120) in (-signal.SIGTERM, 128 + signal.SIGTERM)
    finally:
        server.stop()
    stopped = [event for event in server.events() if event["event"] == "stopped"]
    assert len(stopped) == 1, server.lines
    assert stopped[0]["containers_removed"] == 2  # one warm container per node
    _no_containers_left(engines)


def test_every_node_proves_its_hardening_under_gvisor(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine]
) -> None:
    """The doctor's probes (`check_sandbox`) on each node's own engine, under runsc: the same
    checks as on the shared engine under runsc (gVisor's set), and every one holds."""
    from guardrail.sandbox.doctor import DoctorReport, check_sandbox

    with DockerSandbox(engines[0].image, pool_size=1, runtime="runsc") as local:
        expected = [(check.name, check.ok) for check in check_sandbox(local).checks]
    with _sandbox(cluster, engines[0].image, runtime="runsc") as sandbox:
        reports = [DoctorReport.model_validate_json(text) for _, text in sandbox.check_nodes()]
    assert len(reports) == 2
    for report in reports:
        assert report.runtime == "runsc", report
        assert [(check.name, check.ok) for check in report.checks] == expected
        assert report.ok, report
    _no_containers_left(engines)


def _raylet_pid(node_pid: int) -> int:
    """The raylet among the processes of one node's ``ray start --block`` session."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != node_pid:
                continue
            command = (entry / "cmdline").read_bytes().split(b"\0")[0]
        except OSError:
            continue
        if command.endswith(b"/raylet"):
            return int(entry.name)
    raise AssertionError(f"no raylet in the session of {node_pid}")


def test_zz_a_node_whose_raylet_dies_loses_no_verdict(
    cluster: RayNodes, engines: tuple[SecondEngine, SecondEngine]
) -> None:
    """Last in the module: node B does not come back (the cluster is the module's)."""
    from guardrail.sandbox.docker import remove_leftovers

    jobs = [Job(SLOW if i % 2 else HONEST, SQUARE) for i in range(12)]
    with _sandbox(cluster, engines[0].image, chunk_jobs=3, deadline_s=20.0) as sandbox:
        sandbox.close_timeout_s = 15.0  # node B's actor is gone; its close never answers
        sandbox.warm_up()
        os.kill(_raylet_pid(cluster.nodes[1].pid), signal.SIGKILL)
        # Calls go to the actor's worker directly, so node B's actor may judge on until Ray
        # declares the node dead and its worker ends: every batch meanwhile must come out right.
        deadline = time.monotonic() + 300
        while _node(sandbox, IPS[1])["usable"]:
            assert time.monotonic() < deadline, "node B was never found dead"
            verdicts = sandbox.run(jobs)
            assert all(verdict.status is Status.VERIFIED for verdict in verdicts), verdicts
        after = sandbox.run([Job(BUGGY, SQUARE)] * 3 + jobs)
        assert [verdict.status for verdict in after] == [Status.FAILED] * 3 + [
            Status.VERIFIED
        ] * len(jobs)
        assert not _node(sandbox, IPS[1])["usable"]
    # Node B's containers lost their owner with the node; the next sweep on its engine (any
    # sandbox's first start there) removes them, as it removes a crashed run's.
    client = engines[1].client()
    try:
        deadline = time.monotonic() + 60
        while engines[1].labelled():
            remove_leftovers(client)
            assert time.monotonic() < deadline, engines[1].labelled()
            time.sleep(2)
    finally:
        client.close()
    _no_containers_left(engines)
