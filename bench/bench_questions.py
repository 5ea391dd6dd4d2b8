"""Benchmark: how often the gate's questions catch buggy code with one visible test.

For every query of a pool (``builtin`` or ``humaneval``), each draw shows the gate one random
visible test (`guardrail_eval.visible`), hands it the query's whole candidate set (canonical and
distractors, in a seeded random order: no retrieval system, so no retrieval tie decides it) and
runs `guardrail_eval.asking.ask_rounds` with the canonical as the oracle. For Q = 0..3 it prints
the share of (query, draw) runs where the agent acted on buggy code (the top kept candidate is a
distractor) and where it did so silently (that round raised no question), and the median and
spread of one run's wall clock.

``--baseline REF`` also runs the probe generator of git revision ``REF`` (its
``guardrail/probes.py`` and ``guardrail/probe_values.py``, loaded as separate modules) in the
same process, interleaved query by query, and prints each figure's ratio new / baseline.
Usage: ``python bench/bench_questions.py [--pool builtin] [--draws 2] [--baseline main]
[--probe-limit 40]``
after ``scripts/docker-up``. Each way has its own temporary verdict cache (so neither
reuses the other's probe runs).
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import guardrail.gate
from guardrail.cache import VerdictCache
from guardrail.gate import Candidate
from guardrail.probes import Probe
from guardrail.sandbox.docker import DockerSandbox
from guardrail_eval.asking import RecordingGate, ask_rounds
from guardrail_eval.selection import open_pool
from guardrail_eval.visible import visible_indices, visible_spec

ROOT = Path(__file__).resolve().parent.parent
MAX_Q = 3
Generator = Callable[..., list]  # type: ignore[type-arg]


def baseline_generator(ref: str) -> Generator:
    """``generate_probes`` of git revision ``ref``, with its own ``probe_values``."""
    modules: dict[str, ModuleType] = {}
    for name in ("probe_values", "probes"):
        source = subprocess.run(
            ["git", "-C", str(ROOT), "show", f"{ref}:guardrail/{name}.py"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        source = source.replace("guardrail.probe_values", "_baseline_probe_values")
        spec = importlib.util.spec_from_loader(f"_baseline_{name}", loader=None)
        assert spec is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[f"_baseline_{name}"] = module
        exec(compile(source, f"{ref}:guardrail/{name}.py", "exec"), module.__dict__)
        modules[name] = module
    old = modules["probes"].generate_probes

    def generate(*args: object, **kwargs: object) -> list[Probe]:  # as today's Probe class
        return [Probe(**probe.model_dump()) for probe in old(*args, **kwargs)]

    return generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pool", default="builtin")
    parser.add_argument("--draws", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--baseline", default=None, help="git revision of the old generator")
    parser.add_argument("--limit", type=int, default=0, help="first N queries only (0: all)")
    parser.add_argument("--probe-limit", type=int, default=40, help="the Gate's probe_limit")
    options = parser.parse_args()

    current = guardrail.gate.__dict__["generate_probes"]
    ways: dict[str, Generator] = {"new": current}
    if options.baseline:
        ways = {"baseline": baseline_generator(options.baseline), "new": current}
    with tempfile.TemporaryDirectory() as folder, DockerSandbox(pool_size=2) as sandbox:
        gates = {
            way: RecordingGate(
                sandbox,
                cache=VerdictCache(Path(folder) / f"{way}.db"),
                probe_limit=options.probe_limit,
            )
            for way in ways
        }
        pool = open_pool(options.pool, gates["new"])
        queries = pool.queries[: options.limit or None]
        buggy = {way: [[0] * (MAX_Q + 1), [0] * (MAX_Q + 1)] for way in ways}
        times: dict[str, list[float]] = {way: [] for way in ways}
        runs = 0
        for draw in range(options.draws):
            for query in queries:
                spec = visible_spec(pool, query, visible_indices(query, 1, draw, options.seed))
                entries = [pool.canonical(query), *pool.distractors(query)]
                random.Random(f"{options.seed}/{draw}/{query.query_id}").shuffle(entries)
                labels = {entry.corpus_id: entry.label for entry in entries}
                candidates = [Candidate(code=e.code, id=e.corpus_id) for e in entries]
                oracle = pool.canonical(query).code
                runs += 1
                for way, generator in ways.items():
                    guardrail.gate.__dict__["generate_probes"] = generator
                    started = time.perf_counter()
                    rounds = ask_rounds(gates[way], candidates, spec, oracle, MAX_Q)
                    times[way].append(time.perf_counter() - started)
                    for q in range(MAX_Q + 1):
                        round_ = rounds[min(q, len(rounds) - 1)]
                        kept = round_.result.kept
                        if kept and labels[kept[0].candidate.id or ""] == "incorrect":
                            buggy[way][0][q] += 1
                            buggy[way][1][q] += round_.question is None
                            if q == 1 and round_.question is None:
                                print(f"silent {way} {query.query_id}", file=sys.stderr)
                print(f"draw {draw} {query.query_id}: done", file=sys.stderr, flush=True)
        guardrail.gate.__dict__["generate_probes"] = current
    print(
        f"pool {options.pool}: {len(queries)} queries x {options.draws} draws = {runs} runs,"
        f" probe limit {options.probe_limit}"
    )
    for way in ways:
        acted, silent = buggy[way]
        cells = "  ".join(
            f"Q={q}: buggy {acted[q] / runs:6.1%} silent {silent[q] / runs:6.1%}"
            for q in range(MAX_Q + 1)
        )
        ordered = sorted(times[way])
        q1, _, q3 = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else (ordered[0],) * 3
        print(f"{way:9s} {cells}")
        print(
            f"{'':9s} seconds per run: median {statistics.median(ordered):.2f}"
            f" IQR {q3 - q1:.2f} max {ordered[-1]:.2f}"
        )
    if "baseline" in ways:
        for q in range(MAX_Q + 1):
            old, new = buggy["baseline"], buggy["new"]
            ratio = [n[q] / o[q] if o[q] else float("nan") for o, n in zip(old, new, strict=True)]
            print(f"ratio new/baseline Q={q}: buggy {ratio[0]:.2f} silent {ratio[1]:.2f}")


if __name__ == "__main__":
    main()
