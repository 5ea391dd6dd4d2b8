"""Benchmark: verify 10 candidates x 5 tests, four ways, in one run on this machine.

1. ``docker run --rm`` per candidate (one fresh hardened container each, 2 at a time);
2. the pooled gate, cold (a new `DockerSandbox`: containers start inside the timing);
3. the pooled gate, warm (containers already running; the verdict cache is off throughout);
4. unsandboxed in-process ``exec`` (no isolation at all: the floor, never a product option).

Prints median, p95, min, max and IQR per way, and the ratios to the warm gate side by side.
Usage: ``python bench/bench_gate.py [--rounds 30]`` after ``scripts/docker-up``.
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.image import default_image
from guardrail.spec import Spec

SNIPPETS = Path(__file__).resolve().parent.parent / "tests" / "snippets" / "bug_types"
SPEC = Spec.from_file(SNIPPETS / "tests.py")
SPEC = Spec.build(SPEC.tests[:5], SPEC.entry_point)
CODES = [path.read_text() for path in sorted(SNIPPETS.glob("*.py")) if path.name != "tests.py"]
CODES = (CODES * 2)[:10]


def docker_run_round() -> None:
    """Each candidate in its own `docker run --rm` with the gate's hardening flags."""
    script = "\n".join(
        ["import sys", "ns = {}", "exec(sys.argv[1], ns)"]
        + [f"try:\n    exec({test!r}, ns)\nexcept BaseException:\n    pass" for test in SPEC.tests]
    )

    def one(code: str) -> None:
        subprocess.run(
            [
                "docker",
                "run",
                "--rm",
                "--network",
                "none",
                "--read-only",
                "--cap-drop",
                "ALL",
                "--security-opt",
                "no-new-privileges",
                "--pids-limit",
                "256",
                "--memory",
                "1g",
                "--log-driver",
                "none",
                "--tmpfs",
                "/tmp",
                "-u",
                "65534",
                default_image(),
                "python3",
                "-I",
                "-c",
                script,
                code,
            ],
            check=True,
            capture_output=True,
        )

    with ThreadPoolExecutor(2) as pool:
        list(pool.map(one, CODES))


def in_process_round() -> None:
    for code in CODES:
        namespace: dict[str, object] = {}
        exec(code, namespace)
        for test in SPEC.tests:
            with contextlib.suppress(Exception):  # a failing test is an outcome, not a crash
                exec(test, namespace)


def measure(run: Callable[[], object], rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        run()
        times.append((time.perf_counter() - start) * 1000)
    return times


def summary(name: str, times: list[float], warm_median: float) -> str:
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    q1, _, q3 = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else (ordered[0],) * 3
    median = statistics.median(ordered)
    ratio = median / warm_median
    return (
        f"{name:34s} {len(times):>6d} {median:>9.1f} {p95:>9.1f} {ordered[0]:>9.1f}"
        f" {ordered[-1]:>9.1f} {q3 - q1:>8.1f} {ratio:>10.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="warm gate and in-process rounds")
    parser.add_argument("--slow-rounds", type=int, default=5, help="docker run and cold rounds")
    args = parser.parse_args()

    def cold_round() -> None:
        with DockerSandbox(pool_size=2) as sandbox:
            Gate(sandbox, cache=False).verify(CODES, SPEC)

    with DockerSandbox(pool_size=2) as sandbox:
        warm = Gate(sandbox, cache=False)
        statuses = [v.status.value for v in warm.verify(CODES, SPEC)]
        warm_times = measure(lambda: warm.verify(CODES, SPEC), args.rounds)
    results = {
        "docker run --rm per candidate": measure(docker_run_round, args.slow_rounds),
        "pooled gate, cold (new pool)": measure(cold_round, args.slow_rounds),
        "pooled gate, warm": warm_times,
        "in-process exec (unsandboxed floor)": measure(in_process_round, args.rounds),
    }
    warm_median = statistics.median(warm_times)
    print(
        f"10 candidates x {len(SPEC.tests)} tests per round;"
        f" {statuses.count('verified')} of {len(statuses)} verified;"
        f" Python {sys.version.split()[0]}"
    )
    print(
        f"{'way (ms per round of 10)':34s} {'rounds':>6s} {'p50':>9s} {'p95':>9s} {'min':>9s}"
        f" {'max':>9s} {'IQR':>8s} {'vs warm':>11s}"
    )
    for name, times in results.items():
        print(summary(name, times, warm_median))
    speedup = statistics.median(results["docker run --rm per candidate"]) / warm_median
    print(f"warm pooled gate is {speedup:.0f}x faster than docker run per candidate")


if __name__ == "__main__":
    main()
