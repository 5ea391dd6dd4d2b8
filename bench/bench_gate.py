"""Benchmark: verify 10 candidates x 5 tests, every way side by side, in one run on this machine.

1. ``docker run --rm`` per candidate (one fresh hardened container each, 2 at a time);
2. ``docker exec`` per candidate into one warm hardened container (2 at a time);
3. the pooled gate, cold (a new `DockerSandbox`: containers start inside the timing);
4. the pooled gate, warm, under runc (containers already running; the verdict cache is off);
5. the pooled gate, warm, under gVisor's runsc (when the engine has it: scripts/docker-up);
6. a host fork per candidate, no container (the floor of one fresh process per candidate);
7. unsandboxed in-process ``exec`` (no isolation at all: never a product option).

The docker run, docker exec and fork ways take the same steps: load the candidate, then run each
test, a failing test caught. Prints median, p95, min, max and IQR per way and the ratio of each
median to the warm gate's under runc. Rounds are interleaved, spread evenly, so that a change in
the (shared) machine's load lands on all ways alike: first the warm ways and floors, then the ways
that start containers (whose teardown in the engine would slow the warm rounds beside them).
Usage: ``python bench/bench_gate.py [--rounds 30] [--slow-rounds 5]`` after ``scripts/docker-up``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from timing import summary

from guardrail.errors import SandboxError
from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.image import default_image
from guardrail.spec import Spec

SNIPPETS = Path(__file__).resolve().parent.parent / "tests" / "snippets" / "bug_types"
SPEC = Spec.from_file(SNIPPETS / "tests.py")
SPEC = Spec.build(SPEC.tests[:5], SPEC.entry_point)
CODES = [path.read_text() for path in sorted(SNIPPETS.glob("*.py")) if path.name != "tests.py"]
CODES = (CODES * 2)[:10]
PARALLEL = 2  # like the gate's pool of two
# The candidate's code arrives as argv[1]; tests that fail are outcomes, not crashes.
SCRIPT = "\n".join(
    ["import sys", "ns = {}", "exec(sys.argv[1], ns)"]
    + [f"try:\n    exec({test!r}, ns)\nexcept BaseException:\n    pass" for test in SPEC.tests]
)
# The gate's hardening, as docker flags (the gate adds its own uids, rlimits and supervisor).
HARDENING = [
    "--network", "none", "--read-only", "--cap-drop", "ALL",
    "--security-opt", "no-new-privileges", "--pids-limit", "256", "--memory", "1g",
    "--log-driver", "none", "--tmpfs", "/tmp:rw,nosuid,nodev,noexec", "-u", "65534",
]  # fmt: skip


def run_each(command: Callable[[str], list[str]]) -> None:
    def one(code: str) -> None:
        subprocess.run(command(code), check=True, capture_output=True)

    with ThreadPoolExecutor(PARALLEL) as pool:
        list(pool.map(one, CODES))


def docker_run_round() -> None:
    """Each candidate in its own `docker run --rm` with the gate's hardening flags."""
    run_each(lambda code: ["docker", "run", "--rm", *HARDENING, default_image(), *python(code)])


@contextlib.contextmanager
def warm_container() -> Iterator[str]:
    """One long-lived hardened container to `docker exec` candidates into."""
    started = subprocess.run(
        ["docker", "run", "-d", "--rm", *HARDENING, default_image(), "sleep", "infinity"],
        check=True,
        capture_output=True,
        text=True,
    )
    container = started.stdout.strip()
    try:
        yield container
    finally:
        subprocess.run(["docker", "rm", "-f", container], check=False, capture_output=True)


def python(code: str) -> list[str]:
    return ["python3", "-I", "-c", SCRIPT, code]


def fork_round() -> None:
    """A fresh host process per candidate (fork, load, run the tests, exit), 2 at a time."""
    running: list[int] = []
    for code in CODES:
        if len(running) == PARALLEL:
            os.waitpid(running.pop(0), 0)
        pid = os.fork()
        if pid == 0:
            try:
                namespace: dict[str, object] = {}
                exec(code, namespace)
                for test in SPEC.tests:
                    with contextlib.suppress(BaseException):
                        exec(test, namespace)
            finally:
                os._exit(0)
        running.append(pid)
    for pid in running:
        os.waitpid(pid, 0)


def in_process_round() -> None:
    for code in CODES:
        namespace: dict[str, object] = {}
        exec(code, namespace)
        for test in SPEC.tests:
            with contextlib.suppress(Exception):  # a failing test is an outcome, not a crash
                exec(test, namespace)


def measure(ways: dict[str, tuple[Callable[[], object], int]]) -> dict[str, list[float]]:
    """Milliseconds per round of each way, the ways' rounds interleaved.

    Round-robin rather than one way after the other, so that a change in the machine's load
    (it is shared) lands on every way alike and the ratios stay meaningful.
    """
    for run, _ in ways.values():
        run()  # one untimed round: imports, page cache, the engine's first container
    times: dict[str, list[float]] = {name: [] for name in ways}
    cycles = max(rounds for _, rounds in ways.values())
    for index in range(cycles):
        for name, (run, rounds) in ways.items():
            if index * rounds // cycles != (index + 1) * rounds // cycles:  # spread evenly
                start = time.perf_counter()
                run()
                times[name].append((time.perf_counter() - start) * 1000)
    return times


def warm_gate(stack: contextlib.ExitStack, runtime: str) -> Gate | str:
    """A warm gate (its pool started) under ``runtime``, or why there is none here."""
    try:
        sandbox = stack.enter_context(DockerSandbox(pool_size=PARALLEL, runtime=runtime))
        sandbox.check_ready()
        sandbox.warm_up()
    except SandboxError as exc:
        return str(exc)
    return Gate(sandbox, cache=False)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30, help="warm gate and floor rounds")
    parser.add_argument("--slow-rounds", type=int, default=5, help="docker and cold rounds")
    args = parser.parse_args()
    fast, slow = args.rounds, args.slow_rounds

    def cold_round() -> None:
        with DockerSandbox(pool_size=PARALLEL, runtime="runc") as sandbox:
            Gate(sandbox, cache=False).verify(CODES, SPEC)

    with contextlib.ExitStack() as stack:
        runc = warm_gate(stack, "runc")
        if isinstance(runc, str):
            sys.exit(f"bench_gate: the gate cannot run: {runc}")
        runsc = warm_gate(stack, "runsc")
        container = stack.enter_context(warm_container())
        statuses = [verdict.status.value for verdict in runc.verify(CODES, SPEC)]
        warm: dict[str, tuple[Callable[[], object], int]] = {
            "pooled gate, warm, runc": (lambda: runc.verify(CODES, SPEC), fast)
        }
        if isinstance(runsc, Gate):
            judged = [verdict.status.value for verdict in runsc.verify(CODES, SPEC)]
            if judged != statuses:
                sys.exit(f"bench_gate: runsc judged {judged}, runc {statuses}")
            warm["pooled gate, warm, runsc (gVisor)"] = (lambda: runsc.verify(CODES, SPEC), fast)
        warm["host fork per candidate (no container)"] = (fork_round, fast)
        warm["in-process exec (unsandboxed floor)"] = (in_process_round, fast)
        load_before = os.getloadavg()[0]
        # The ways that start and remove containers go second: the engine tears containers down
        # in the background, which would otherwise land on the warm rounds interleaved with them.
        results = measure(warm)
        results |= measure(
            {
                "docker run --rm per candidate": (docker_run_round, slow),
                "docker exec per candidate (warm)": (
                    lambda: run_each(lambda code: ["docker", "exec", container, *python(code)]),
                    slow,
                ),
                "pooled gate, cold (new pool), runc": (cold_round, slow),
            }
        )

    reference = statistics.median(results["pooled gate, warm, runc"])
    print(
        f"10 candidates x {len(SPEC.tests)} tests per round;"
        f" {statuses.count('verified')} of {len(statuses)} verified;"
        f" Python {sys.version.split()[0]}; {os.cpu_count()} cores, load average"
        f" {load_before:.1f} before, {os.getloadavg()[0]:.1f} after"
    )
    print(
        f"{'way (ms per round of 10)':38s} {'rounds':>6s} {'p50':>9s} {'p95':>9s} {'min':>9s}"
        f" {'max':>9s} {'IQR':>8s} {'vs warm runc':>11s}"
    )
    for name, times in results.items():
        print(summary(name, times, reference))
    if isinstance(runsc, str):
        print(f"pooled gate, warm, runsc: not run ({runsc})")
    speedup = statistics.median(results["docker run --rm per candidate"]) / reference
    print(f"warm pooled gate (runc) is {speedup:.0f}x faster than docker run per candidate")


if __name__ == "__main__":
    main()
