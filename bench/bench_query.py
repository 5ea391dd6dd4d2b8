"""Benchmark: one ``guardrail search`` process end to end, each way side by side in one run.

Each round starts a fresh ``guardrail search QUERY --json`` process (a user or a script asking
one query), on an index of the test suite's fixture package (25 snippets, most with doctests,
which the gate judges in the Docker sandbox), built once before the clock starts:

1. in-process embedding (``--no-fast-embedding``): imports torch and sentence-transformers and
   loads all-MiniLM-L6-v2, as every search did before;
2. the fast path (the default): the query embedded by numpy, the same vectors;
3. the fast path with the verdict cache off (``--no-cache``): the gate starts its containers;
4. the floor: a process that only imports the CLI (``python -c 'import guardrail.cli.app'``).

Ways 1 and 2 find the verdicts in the cache (one untimed round fills it), so they differ only in
how the query is embedded. Every way's rows (ids, statuses) must agree, scores to 1e-6, or the
benchmark stops. Prints median, p95, min, max and IQR per way and each median's ratio to the fast
path's (absolute times vary several-fold between machines; the ratios are what carry over).
Rounds are interleaved, so that a change in the (shared) machine's load lands on all ways alike.
Usage: ``python bench/bench_query.py [--rounds 7]`` after ``scripts/docker-up``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from timing import summary

from guardrail.index import CodeIndex, minilm_embedding, split_tree

ROOT = Path(__file__).resolve().parent.parent
CODEBASE = ROOT / "tests" / "snippets" / "codebase"
QUERIES = ["is this number prime", "leap year", "split a list into chunks of size n"]
FAST = "fast path (numpy query embedding)"
SLOW = "in-process embedding (torch)"
NO_CACHE = "fast path, verdict cache off"
FLOOR = "floor: python + import guardrail.cli"


def guardrail(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from guardrail.cli.app import main; main()", *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, check=False)


def rows(done: subprocess.CompletedProcess[str]) -> list[tuple[str, float, str]]:
    if done.returncode != 0:
        sys.exit(f"bench_query: guardrail search exited {done.returncode}: {done.stderr[-800:]}")
    payload = json.loads(done.stdout)
    return [
        (row["id"], row["score"], row["verdict"]["status"])
        for row in payload["results"] + payload["dropped"]
    ]


def measure(ways: dict[str, Callable[[int], object]], rounds: int) -> dict[str, list[float]]:
    """Milliseconds per process of each way, the ways' rounds interleaved (round ``i`` asks
    ``QUERIES[i % 3]`` every way)."""
    times: dict[str, list[float]] = {name: [] for name in ways}
    for index in range(rounds):
        for name, run in ways.items():
            start = time.perf_counter()
            run(index)
            times[name].append((time.perf_counter() - start) * 1000)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7, help="processes per way")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-query-") as work:
        index_dir = Path(work) / "index"
        index = CodeIndex("bench", path=index_dir, embedding_function=minilm_embedding())
        index.add(split_tree(CODEBASE).snippets)
        snippets = index.count()
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
            "GUARDRAIL_CACHE_DIR": str(Path(work) / "cache"),
        }
        env.pop("GUARDRAIL_FAST_EMBEDDING", None)
        where = ["--path", str(index_dir), "--collection", "bench", "--json"]

        def search(number: int, *extra: str) -> list[tuple[str, float, str]]:
            query = QUERIES[number % len(QUERIES)]
            return rows(guardrail("search", query, *where, *extra, env=env))

        for number in range(len(QUERIES)):  # untimed: fills the verdict cache, checks agreement
            fast, slow = search(number), search(number, "--no-fast-embedding")
            uncached = search(number, "--no-cache")
            same = [(id_, status) for id_, _, status in fast]
            if same != [(i, s) for i, _, s in slow] or same != [(i, s) for i, _, s in uncached]:
                sys.exit(f"bench_query: the ways disagree on {QUERIES[number]!r}")
            if max(abs(a[1] - b[1]) for a, b in zip(fast, slow, strict=True)) >= 1e-6:
                sys.exit(f"bench_query: scores differ by 1e-6 or more on {QUERIES[number]!r}")
        statuses = [status for _, _, status in search(0)]
        load_before = os.getloadavg()[0]
        results = measure(
            {
                SLOW: lambda i: search(i, "--no-fast-embedding"),
                FAST: search,
                NO_CACHE: lambda i: search(i, "--no-cache"),
                FLOOR: lambda _: subprocess.run(
                    [sys.executable, "-c", "import guardrail.cli.app"], env=env, check=True
                ),
            },
            args.rounds,
        )
    reference = statistics.median(results[FAST])
    print(
        f"one `guardrail search --json` process per round, {len(QUERIES)} queries in turn over"
        f" {snippets} snippets; first query: {statuses.count('verified')} of"
        f" {len(statuses)} verified; Python {sys.version.split()[0]}; {os.cpu_count()} cores,"
        f" load average {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    )
    print(
        f"{'way (ms per process)':38s} {'rounds':>6s} {'p50':>9s} {'p95':>9s} {'min':>9s}"
        f" {'max':>9s} {'IQR':>8s} {'vs fast':>11s}"
    )
    for name, times in results.items():
        print(summary(name, times, reference, digits=0))
    speedup = statistics.median(results[SLOW]) / reference
    print(f"the fast path is {speedup:.1f}x faster than embedding in-process with torch")


if __name__ == "__main__":
    main()
