"""Benchmark: `RaySandbox` against a local `DockerSandbox` on the same 10 x 5 round, one node.

Starts a one-node Ray cluster of its own on 127.0.0.10 (``tests/ray_nodes.py``: token auth on,
usage stats off, one CPU, a 200 MB object store, its own temp dir and ports), whose judge actor
wraps a `DockerSandbox` on the same engine as the local one; both pools have the same size. The
rounds alternate (local, Ray, local, ...) after a warm-up of both, so a change in the shared
machine's load lands on both alike. Prints median, p95, min, max and IQR per way, the ratio of
the medians (target: at most 1.15x), the cluster's start-up time and its processes' memory.
The cluster is stopped by its pids, never ``ray stop``.
Usage: ``python bench/bench_ray.py [--rounds 30] [--pool-size 2]`` after ``scripts/docker-up``.
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

from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.raysandbox import RaySandbox

IP = "127.0.0.10"


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--pool-size", type=int, default=2)
    args = parser.parse_args()
    jobs = [Job(code, SPEC) for code in CODES]
    engine = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
    root = Path(tempfile.mkdtemp(prefix="gr-bench-ray-", dir="/tmp"))
    nodes = RayNodes(root, (IP,), (engine,))
    os.environ.update(nodes.env())
    started = time.perf_counter()
    nodes.start()
    try:
        up_s = time.perf_counter() - started
        connect = time.perf_counter()
        with (
            DockerSandbox(pool_size=args.pool_size) as local,
            RaySandbox(nodes.address, node_ip=IP, pool_size=args.pool_size) as ray,
        ):
            connect_s = time.perf_counter() - connect
            assert local.identity == ray.identity, (local.identity, ray.identity)
            local.warm_up()
            ray.warm_up()
            expected = [verdict.status for verdict in local.run(jobs)]
            assert [verdict.status for verdict in ray.run(jobs)] == expected
            times: dict[str, list[float]] = {"local": [], "ray": []}
            for _ in range(args.rounds):
                for name, sandbox in (("local", local), ("ray", ray)):
                    begin = time.perf_counter()
                    sandbox.run(jobs)
                    times[name].append((time.perf_counter() - begin) * 1000)
            memory = sum(_rss_mb(node.pid) for node in nodes.nodes)
        reference = statistics.median(times["local"])
        print(f"{len(jobs)} candidates x {len(SPEC.tests)} tests, pool {args.pool_size}, ms")
        print(
            f"{'way':38s} {'rounds':>6s} {'median':>9s} {'p95':>9s} {'min':>9s} {'max':>9s}"
            f" {'IQR':>8s} {'ratio':>11s}"
        )
        print(summary("DockerSandbox (local)", times["local"], reference))
        print(summary("RaySandbox (one node, same engine)", times["ray"], reference))
        print(
            f"cluster start-up {up_s:.1f} s (ray start until ray status shows the node);"
            f" RaySandbox ready {connect_s:.1f} s (connect, place, identity)"
        )
        print(f"memory of the node's Ray processes: {memory:.0f} MB RSS")
    finally:
        nodes.stop()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
