"""Benchmark: a whole `guardrail eval`, cold and then warm, on this machine.

``--pool builtin`` (the default) is the main job, what ``make eval`` runs; ``--pool humaneval``
the HumanEval pool.

1. the HumanEval pool is built once (timed if it was not cached yet; not part of either run);
   the built-in pool ships with the package;
2. cold: a fresh cache dir (no verdicts, no dense index; a built pool copied in), a fresh
   process, so the MiniLM import, the embedding of the corpus and every sandbox run count;
3. warm: the same command again with the cache dir the cold run left (verdicts and index warm).

Each run is the installed ``guardrail eval`` in its own process; prints wall time, queries/s,
verifications/s (every verdict the eval used, cached or run), sandbox runs and the run's peak
resident memory (``wait4`` rusage of the child). Aims: the main job (built-in pool) cold <= 180 s
(issue 21); HumanEval cold <= 180 s and warm <= 15 s (set for its all-tests arm of an earlier
release); <= 1.5 GB each.

Usage: ``python bench/bench_eval.py [--pool builtin] [--seed 0] [-- extra guardrail eval
options]`` after ``scripts/docker-up``, e.g. ``python bench/bench_eval.py -- --draws 5``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from guardrail_eval.humaneval import humaneval_cache_dir, load_humaneval_pool
from guardrail_eval.selection import pool_cache_root

GUARDRAIL = Path(sys.executable).with_name("guardrail")
AIMS = {"builtin": {"cold": 180.0}, "humaneval": {"cold": 180.0, "warm": 15.0}}
MEMORY_AIM_MB = 1536.0


@dataclass(frozen=True)
class Phase:
    name: str
    wall_s: float
    peak_rss_mb: float
    queries: int
    verifications: int
    sandbox_runs: int
    headline: str


def ensure_pool(seed: int) -> tuple[Path, float | None]:
    """The cached HumanEval pool folder, and the build time when it had to be built now."""
    folder = humaneval_cache_dir(seed, pool_cache_root())
    if (folder / "data" / "queries.jsonl").is_file():
        return folder, None
    started = time.perf_counter()
    with Gate(DockerSandbox()) as gate:
        load_humaneval_pool(gate, seed, cache_root=pool_cache_root())
    return folder, time.perf_counter() - started


def run_phase(name: str, cache_dir: Path, pool: str, seed: int, extra: list[str]) -> Phase:
    out = cache_dir.parent / f"out-{name}"
    command = [str(GUARDRAIL), "eval", "--pool", pool, "--seed", str(seed)]
    command += ["--out", str(out), *extra]
    environment = {**os.environ, "GUARDRAIL_CACHE_DIR": str(cache_dir)}
    started = time.perf_counter()
    child = subprocess.Popen(command, env=environment, stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    output = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - started
    code = os.waitstatus_to_exitcode(status)
    if code != 0:
        sys.exit(f"{name} run failed with exit code {code}:\n{output}")
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    queries = max(arm["n_queries"] for arm in summary["arms"])
    return Phase(
        name=name,
        wall_s=wall,
        peak_rss_mb=usage.ru_maxrss / 1024.0,  # kilobytes on Linux
        queries=queries,
        verifications=summary["verifications"],
        sandbox_runs=summary["sandbox_runs"],
        headline=output.splitlines()[0] if output else "",
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--pool", choices=("builtin", "humaneval"), default="builtin")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("extra", nargs="*", help="extra `guardrail eval` options (after --)")
    arguments = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="guardrail-bench-eval-") as scratch:
        cache_dir = Path(scratch) / "cache"
        if arguments.pool == "humaneval":
            pool_folder, build_s = ensure_pool(arguments.seed)
            if build_s is not None:
                print(f"built the HumanEval pool once in {build_s:.1f} s (not part of the runs)")
            shutil.copytree(pool_folder, cache_dir / "pools" / pool_folder.name)
        phases = [run_phase(name, cache_dir, arguments.pool, arguments.seed, arguments.extra)
                  for name in ("cold", "warm")]  # fmt: skip
    print(phases[0].headline)
    print(
        f"{'run':<5} {'wall s':>8} {'queries/s':>10} {'verif./s':>9} {'sandbox runs':>13}"
        f" {'peak RSS MB':>12}  aim"
    )
    for phase in phases:
        aim = AIMS[arguments.pool].get(phase.name, math.inf)
        verdict = "ok" if phase.wall_s <= aim and phase.peak_rss_mb <= MEMORY_AIM_MB else "MISSED"
        wall_aim = f"<= {aim:.0f} s, " if aim < math.inf else ""
        print(
            f"{phase.name:<5} {phase.wall_s:8.1f} {phase.queries / phase.wall_s:10.2f}"
            f" {phase.verifications / phase.wall_s:9.1f} {phase.sandbox_runs:13d}"
            f" {phase.peak_rss_mb:12.0f}  {wall_aim}<= {MEMORY_AIM_MB:.0f} MB: {verdict}"
        )
    print(f"({phases[0].queries} queries, {phases[0].verifications} verifications per run)")


if __name__ == "__main__":
    main()
