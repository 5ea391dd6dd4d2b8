"""Benchmark: `RaySandbox` against a local `DockerSandbox` on the same 10 x 5 round.

Starts a Ray cluster of its own (``tests/ray_nodes.py``: token auth on, usage stats off, one CPU
and a 200 MB object store per node, its own temp dir and ports), whose judge actors wrap a
`DockerSandbox` on the same engine as the local one, each pool of ``--pool-size``. Rounds
alternate (local, Ray, local, ...) after a warm-up of both, so a change in the shared machine's
load lands on both alike. Prints median, p95, min, max and IQR per way and the ratio of the
medians to the local pool's, the cluster's start-up time and its processes' memory.

``--nodes 1`` (the default): one node on 127.0.0.10 (target: at most 1.15x the local pool).

``--nodes 2``: the same round on one node, then, in the same run, on two (a worker on 127.0.0.11
joins the head), each phase alternating with the local pool as its reference; prints jobs/s and
p95 of two nodes against one, and each node's join time and the memory at one and at two nodes.
Both nodes judge on this machine's one engine: a private engine per node would add root and
nothing else here. On a machine of 2 cores shared with other work, two nodes cannot show
scaling: the second node brings its own pool but no CPU, and every container, both raylets and
both actors compete for the same 2 cores, so the ratio measures Ray's cost of spreading a round,
not what a second machine adds. On real machines a node adds its pool's rate (jobs/s per node =
pool size x one container's rate); measure it there with this bench on one node, then with
``guardrail eval --backend ray`` against the number of nodes.

The cluster is stopped by its pids, never ``ray stop``.
Usage: ``python bench/bench_ray.py [--rounds 30] [--pool-size 2] [--nodes 1|2]`` after
``scripts/docker-up``.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench_gate import CODES, SPEC
from timing import summary

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
from ray_nodes import RayNodes

from guardrail.sandbox.base import Job, Sandbox
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.raysandbox import RaySandbox

IPS = ("127.0.0.10", "127.0.0.11")
JOBS = [Job(code, SPEC) for code in CODES]


def _rss_mb(pid: int) -> float:
    """Resident memory of ``pid`` and everything in its session, in MB."""
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if os.getsid(int(entry.name)) != pid:
                continue
            for line in (entry / "status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except (OSError, ProcessLookupError):
            continue
    return total / 1024


def _memory_mb(nodes: RayNodes) -> float:
    return sum(_rss_mb(node.pid) for node in nodes.nodes)


def _alternate(local: Sandbox, ray: RaySandbox, rounds: int) -> tuple[list[float], list[float]]:
    """Round times (ms) of ``local`` and ``ray``, alternating, after a warm-up and a check that
    both give the same verdicts."""
    ray.warm_up()
    expected = [verdict.status for verdict in local.run(JOBS)]
    assert [verdict.status for verdict in ray.run(JOBS)] == expected
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(rounds):
        for sandbox, kept in zip((local, ray), times, strict=True):
            begin = time.perf_counter()
            sandbox.run(JOBS)
            kept.append((time.perf_counter() - begin) * 1000)
    return times


def _ray(nodes: RayNodes, pool_size: int) -> tuple[RaySandbox, float]:
    """A `RaySandbox` over every node of ``nodes``, and the seconds it took to be ready."""
    began = time.perf_counter()
    sandbox = RaySandbox(nodes.address, node_ip=IPS[0], pool_size=pool_size)
    return sandbox, time.perf_counter() - began


def _header(pool_size: int) -> None:
    print(f"{len(JOBS)} candidates x {len(SPEC.tests)} tests, pool {pool_size} per way/node, ms")
    print(
        f"{'way':38s} {'rounds':>6s} {'median':>9s} {'p95':>9s} {'min':>9s} {'max':>9s}"
        f" {'IQR':>8s} {'ratio':>11s}"
    )


def _p95(times: list[float]) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]


def one_node(nodes: RayNodes, local: DockerSandbox, args: argparse.Namespace) -> None:
    began = time.perf_counter()
    nodes.start()
    up_s = time.perf_counter() - began
    ray, ready_s = _ray(nodes, args.pool_size)
    with ray:
        assert local.identity == ray.identity, (local.identity, ray.identity)
        local_ms, ray_ms = _alternate(local, ray, args.rounds)
        memory = _memory_mb(nodes)
    reference = statistics.median(local_ms)
    _header(args.pool_size)
    print(summary("DockerSandbox (local)", local_ms, reference))
    print(summary("RaySandbox (one node, same engine)", ray_ms, reference))
    print(
        f"cluster start-up {up_s:.1f} s (ray start until ray status shows the node);"
        f" RaySandbox ready {ready_s:.1f} s (connect, place, identity)"
    )
    print(f"memory of the node's Ray processes: {memory:.0f} MB RSS")


def two_nodes(nodes: RayNodes, local: DockerSandbox, args: argparse.Namespace) -> None:
    """One node, then two (the worker joins), in one run, each phase against the local pool."""
    began = time.perf_counter()
    nodes.start()
    head_s = time.perf_counter() - began
    ray, ready_one_s = _ray(nodes, args.pool_size)
    with ray:
        local_one, one = _alternate(local, ray, args.rounds)
        memory_one = _memory_mb(nodes)
    began = time.perf_counter()
    nodes.start_node(IPS[1], nodes.docker_hosts[0], head=False)
    nodes.wait_for(2)
    join_s = time.perf_counter() - began
    ray, ready_two_s = _ray(nodes, args.pool_size)
    with ray:
        assert len(ray.nodes()) == 2, ray.nodes()
        local_two, two = _alternate(local, ray, args.rounds)
        ran = [node["jobs_run"] for node in ray.nodes()]
        memory_two = _memory_mb(nodes)
    reference = statistics.median(local_one)
    _header(args.pool_size)
    print(summary("DockerSandbox (local, one-node phase)", local_one, reference))
    print(summary("RaySandbox (one node)", one, reference))
    print(summary("DockerSandbox (local, two-node phase)", local_two, reference))
    print(summary("RaySandbox (two nodes, same 2 cores)", two, reference))
    rate_one = len(JOBS) / statistics.median(one) * 1000
    rate_two = len(JOBS) / statistics.median(two) * 1000
    print(
        f"jobs/s at the median: one node {rate_one:.1f}, two nodes {rate_two:.1f}"
        f" ({rate_two / rate_one:.2f}x); p95 two/one {_p95(two) / _p95(one):.2f}x;"
        f" against each phase's local pool: one node"
        f" {statistics.median(one) / statistics.median(local_one):.2f}x, two nodes"
        f" {statistics.median(two) / statistics.median(local_two):.2f}x"
    )
    print(f"jobs judged per node in the two-node phase: {ran}")
    print(
        f"start-up: head {head_s:.1f} s, the worker's join {join_s:.1f} s (ray start until ray"
        f" status shows it); RaySandbox ready {ready_one_s:.1f} s on one node,"
        f" {ready_two_s:.1f} s on two"
    )
    print(f"memory of the Ray processes: {memory_one:.0f} MB (one node), {memory_two:.0f} MB (two)")
    print(
        "two nodes here share the same 2 cores (and one engine): the second node adds a pool but"
        " no CPU, so no scaling can show; the ratio is Ray's cost of spreading the round"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--pool-size", type=int, default=2)
    parser.add_argument("--nodes", type=int, choices=(1, 2), default=1)
    args = parser.parse_args()
    engine = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    root = Path(tempfile.mkdtemp(prefix="gr-bench-ray-", dir="/tmp"))
    nodes = RayNodes(root, IPS[:1], (engine,))
    os.environ.update(nodes.env())
    try:
        with DockerSandbox(pool_size=args.pool_size) as local:
            local.warm_up()
            (two_nodes if args.nodes == 2 else one_node)(nodes, local, args)
    finally:
        nodes.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
