"""Benchmark: the warm pooled gate of two checkouts, alternated in one run on this machine.

The shared machine's speed drifts several-fold between runs, so comparing a figure against one
recorded earlier says little; this runs the same warm round (10 candidates x 5 tests, cache off,
pool of 2) under checkout A, then B, then A ... in fresh processes, and prints each checkout's
median per repetition and the ratio of the medians of medians.

Usage: ``python bench/bench_ab_warm.py --base DIR [--other DIR] [--repeats 3] [--rounds 40]``
(``--base``: e.g. a `git worktree add /tmp/base <commit>`; ``--other`` defaults to this tree).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent

_ROUNDS = """
import statistics, sys, time
from pathlib import Path
import guardrail
from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec

snippets = Path(guardrail.__file__).resolve().parent.parent / "tests" / "snippets" / "bug_types"
spec = Spec.from_file(snippets / "tests.py")
spec = Spec.build(spec.tests[:5], spec.entry_point)
codes = [p.read_text() for p in sorted(snippets.glob("*.py")) if p.name != "tests.py"]
codes = (codes * 2)[:10]
with DockerSandbox(pool_size=2) as sandbox:
    gate = Gate(sandbox, cache=False)
    sandbox.warm_up()
    for _ in range(5):
        gate.verify(codes, spec)
    times = []
    for _ in range(int(sys.argv[1])):
        started = time.perf_counter()
        gate.verify(codes, spec)
        times.append((time.perf_counter() - started) * 1000)
print(statistics.median(times), min(times), max(times))
"""


def run_once(tree: Path, rounds: int) -> tuple[float, float, float]:
    """Median, min and max ms per round of the warm gate of ``tree``, in a fresh process."""
    paths = [tree, tree / "eval"]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in paths)}
    done = subprocess.run(
        [sys.executable, "-c", _ROUNDS, str(rounds)],
        cwd="/",  # so that the current directory's packages do not shadow the tree's
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=900,
    )
    median, low, high = (float(x) for x in done.stdout.split())
    return median, low, high


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", type=Path, required=True)
    parser.add_argument("--other", type=Path, default=HERE)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--rounds", type=int, default=40)
    args = parser.parse_args()
    trees = {"base": args.base.resolve(), "this": args.other.resolve()}
    medians: dict[str, list[float]] = {name: [] for name in trees}
    print(f"warm pooled gate, 10 candidates x 5 tests, {args.rounds} rounds per process;")
    print(f"load average {os.getloadavg()[0]:.1f} before")
    print(f"{'repetition':<12}{'tree':<6}{'p50 ms':>9}{'min':>9}{'max':>9}")
    for repetition in range(1, args.repeats + 1):
        for name, tree in trees.items():
            median, low, high = run_once(tree, args.rounds)
            medians[name].append(median)
            print(f"{repetition:<12}{name:<6}{median:>9.1f}{low:>9.1f}{high:>9.1f}")
            time.sleep(1)
    base, this = (statistics.median(medians[name]) for name in trees)
    spread = {name: max(v) - min(v) for name, v in medians.items()}
    print(
        f"median of medians: base {base:.1f} ms (spread {spread['base']:.1f}),"
        f" this {this:.1f} ms (spread {spread['this']:.1f}); this/base = {this / base:.2f}x"
    )
    print(f"load average {os.getloadavg()[0]:.1f} after; base = {trees['base']}")


if __name__ == "__main__":
    main()
