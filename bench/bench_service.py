"""Benchmark: `guardrail serve` against the ways it replaces, side by side in one run.

1. a fully cached search (query embedded, Chroma, every verdict from the cache): through the
   service (`RemoteGate.search`), as a ``guardrail search --server`` process, as a plain
   ``guardrail search`` process, and in-process (`gated_search` over a warm `Gate`);
2. a cold gate of 20 candidates (distinct text each round: no cache can help), through the
   service (`RemoteGate.verify`) and in-process (`Gate.verify`), rounds interleaved;
3. 1, 2, 4, 8 and 16 concurrent loopback clients, each sending one cold candidate at a time
   for ``--seconds`` (bounded): throughput and p50/p95 latency, throughput as a ratio to one
   client; then again with candidates that each sleep 100 ms in their container, where the
   pool's width (2 containers), not the 2 cores, bounds throughput: N clients should reach
   min(N, 2)x. Service and in-process gate both have a pool of 2 containers.

The service is a real ``guardrail serve`` subprocess (its own pool, cache and open index).
Prints median, p95, min, max and IQR per way and ratios; the machine is shared, so read the
ratios. Usage: ``python bench/bench_service.py [--rounds 15] [--seconds 6]``.
"""

from __future__ import annotations

import argparse
import functools
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from timing import summary

from guardrail.cache import VerdictCache
from guardrail.client import RemoteGate
from guardrail.gate import Gate
from guardrail.index import CodeIndex, Snippet, minilm_embedding
from guardrail.sandbox.docker import DockerSandbox
from guardrail.searching import gated_search
from guardrail.spec import Spec

TOKEN = "bench-token-0123456789abcdef"
COLLECTION = "bench-service"
QUERY = "square a number"
SPEC = Spec.from_tests(["assert square(3) == 9", "assert square(-2) == 4", "assert square(0) == 0"])
GUARDRAIL = [sys.executable, "-c", "from guardrail.cli.app import main; main()"]
HEADER = (
    f"{'way (ms)':38s} {'rounds':>6s}"
    + "".join(f" {name:>9s}" for name in ("p50", "p95", "min", "max"))
    + f" {'IQR':>8s} {'ratio':>11s}"
)


def candidate(n: int, tag: str, sleep_s: float = 0.0) -> str:
    body = ("x * x", "x + x", "abs(x) * x", "x ** 2")[n % 4]
    wait = f"    __import__('time').sleep({sleep_s})\n" if sleep_s else ""
    return f"def square(x):\n    # {tag} {n}\n{wait}    return {body}\n"


def build_index(path: Path) -> None:
    index = CodeIndex(COLLECTION, path=path, embedding_function=minilm_embedding())
    index.add(
        Snippet(code=candidate(n, "indexed"), entry_point="square", qualified_name=f"m{n}.square",
                file=f"src/m{n}.py", start_line=1, end_line=3)
        for n in range(20)
    )  # fmt: skip


def start_server(index: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    command = [*GUARDRAIL, "serve", "--port", "0", "--pool-size", "2", "--token", TOKEN,
               "--path", str(index)]  # fmt: skip
    server = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    assert server.stderr is not None
    for line in server.stderr:
        if '"event": "listening"' in line:
            url = json.loads(line)["url"]
            break
    else:
        sys.exit("bench_service: the server never listened")
    threading.Thread(target=server.stderr.read, daemon=True).start()
    remote = RemoteGate(url, token=TOKEN)
    while remote.health().pool.live != 2:
        time.sleep(0.2)
    return server, url


def timed(function: Callable[[], object]) -> float:
    started = time.perf_counter()
    function()
    return (time.perf_counter() - started) * 1000


def cached_search(
    remote: RemoteGate, url: str, index_dir: Path, gate: Gate, rounds: int, env: dict[str, str]
) -> None:
    index = CodeIndex(
        COLLECTION, path=index_dir, embedding_function=minilm_embedding(), create=False
    )
    cli_remote = [
        *GUARDRAIL,
        "search",
        QUERY,
        "--collection",
        COLLECTION,
        "--server",
        url,
        "--json",
    ]
    cli_local = [
        *GUARDRAIL,
        "search",
        QUERY,
        "--collection",
        COLLECTION,
        "--path",
        str(index_dir),
        "--json",
    ]
    remote.search(QUERY, collection=COLLECTION)  # fills the service's cache
    gated_search(index, gate, QUERY, None, fetch_k=20)  # and the in-process one

    def run(args: list[str]) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(args, env=env, capture_output=True, check=False)

    run(cli_local)  # the CLI's own cache
    times: dict[str, list[float]] = {
        k: [] for k in ("service", "process --server", "process", "in-process")
    }
    for number in range(rounds):
        times["service"].append(timed(lambda: remote.search(QUERY, collection=COLLECTION)))
        times["in-process"].append(
            timed(lambda: gated_search(index, gate, QUERY, None, fetch_k=20))
        )
        if number < max(3, rounds // 3):
            times["process --server"].append(timed(lambda: run(cli_remote)))
            times["process"].append(timed(lambda: run(cli_local)))
    print(
        "\n1. fully cached search, 20 candidates (their stored tests: none, so the question"
        " path is idle)"
    )
    print(HEADER)
    reference = statistics.median(times["service"])
    for name, label in (("service", "service (RemoteGate.search)"),
                        ("in-process", "in-process gated_search, warm Gate"),
                        ("process --server", "`guardrail search --server` process"),
                        ("process", "`guardrail search` process (local)")):  # fmt: skip
        print(summary(label, times[name], reference))


def cold_gate(remote: RemoteGate, gate: Gate, rounds: int) -> None:
    times: dict[str, list[float]] = {"service": [], "in-process": []}
    for number in range(rounds):
        codes = [candidate(n, f"cold-s{number}") for n in range(20)]
        times["service"].append(timed(lambda: remote.verify(codes, SPEC)))  # noqa: B023 - called before the loop moves on
        codes = [candidate(n, f"cold-l{number}") for n in range(20)]
        times["in-process"].append(timed(lambda: gate.verify(codes, SPEC)))  # noqa: B023 - called before the loop moves on
    print("\n2. cold gate: 20 candidates x 3 tests, pool of 2 containers each")
    print(HEADER)
    reference = statistics.median(times["in-process"])
    print(summary("in-process Gate.verify", times["in-process"], reference))
    print(summary("service (RemoteGate.verify)", times["service"], reference))


def client_process(
    url: str, tag: str, seconds: float, go: Any, results: Any, sleep_s: float
) -> None:
    """One client in a process of its own: when ``go`` is set, cold candidates (``tag`` makes
    each text new) one at a time for ``seconds``; its latencies go to ``results``."""
    remote = RemoteGate(url, token=TOKEN)
    results.put(None)  # ready: imported and connected
    go.wait()
    latencies: list[float] = []
    stop = time.monotonic() + seconds
    while time.monotonic() < stop:
        code = candidate(len(latencies), f"{tag}-{len(latencies)}", sleep_s)
        latencies.append(timed(functools.partial(remote.verify, [code], SPEC)))
    remote.close()
    results.put(latencies)


def one_level(url: str, clients: int, seconds: float, sleep_s: float) -> tuple[list[float], float]:
    """Latencies and wall time of ``clients`` client processes started together."""
    context = multiprocessing.get_context("spawn")  # nothing of this process in the clients
    go, results = context.Event(), context.Queue()
    processes = [
        context.Process(
            target=client_process,
            args=(url, f"conc-{uuid.uuid4().hex}", seconds, go, results, sleep_s),
        )
        for _ in range(clients)
    ]
    for process in processes:
        process.start()
    for _ in processes:
        results.get(timeout=120)  # every client ready before the clock starts
    started = time.monotonic()
    go.set()
    latencies = [took for _ in processes for took in results.get(timeout=seconds + 120)]
    wall = time.monotonic() - started
    for process in processes:
        process.join(30)
    return latencies, wall


def concurrency(url: str, seconds: float, sleep_s: float = 0.0) -> None:
    """Throughput by client count; ``sleep_s`` makes each candidate wait that long in its
    container, so the pool's width, not the 2 cores, is what can limit it."""
    what = f"each sleeping {sleep_s * 1000:g} ms in its container" if sleep_s else "trivial"
    print(f"\n3. concurrent clients (a process each), one cold candidate per request ({what}),"
          f" {seconds:g} s each level")  # fmt: skip
    print(
        f"{'clients':>8s} {'requests':>9s} {'req/s':>8s} {'p50 ms':>8s} {'p95 ms':>8s} {'vs 1':>6s}"
    )
    base = None
    for clients in (1, 2, 4, 8, 16):
        latencies, wall = one_level(url, clients, seconds, sleep_s)
        rate = len(latencies) / wall
        base = base or rate
        ordered = sorted(latencies)
        p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
        print(
            f"{clients:>8d} {len(latencies):>9d} {rate:>8.1f}"
            f" {statistics.median(ordered):>8.1f} {p95:>8.1f} {rate / base:>5.2f}x"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--seconds", type=float, default=6.0)
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-service-") as tmp:
        root = Path(tmp)
        env = {**os.environ, "GUARDRAIL_CACHE_DIR": str(root / "cache"),
               "XDG_CONFIG_HOME": str(root / "config"), "GUARDRAIL_TOKEN": TOKEN}  # fmt: skip
        build_index(root / "index")
        load = os.getloadavg()[0]
        server, url = start_server(root / "index", env)
        remote = RemoteGate(url, token=TOKEN)
        gate = Gate(DockerSandbox(pool_size=2), cache=VerdictCache(root / "local.sqlite"))
        try:
            gate.sandbox.warm_up()  # type: ignore[attr-defined]
            print(f"Python {sys.version.split()[0]}; {os.cpu_count()} cores; load average"
                  f" {load:.1f} before")  # fmt: skip
            cached_search(remote, url, root / "index", gate, options.rounds, env)
            cold_gate(remote, gate, max(5, options.rounds // 2))
            concurrency(url, options.seconds)
            concurrency(url, options.seconds, sleep_s=0.1)
            print(f"load average {os.getloadavg()[0]:.1f} after")
        finally:
            remote.close()
            gate.close()
            server.terminate()
            server.wait(120)


if __name__ == "__main__":
    main()
