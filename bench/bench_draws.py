"""How much the visible arms' intervals widen with fewer draws, read off one eval's results.

``guardrail eval --draws 5 --out OUT`` writes one results entry per (draw, query) for every
visible arm. For each honest visible arm and each k of ``--draws`` this prints, for acted on
correct, acted on buggy and silent buggy, the mean over the first k draws and the width of its
95% bootstrap interval over queries (the eval's own `bootstrap_ci`), with how many times wider
it is than with the most draws read: the default number of draws of ``guardrail eval`` is
chosen from this table (docs/evaluation.md, "How many draws"). Nothing runs: it reads files.

Usage: ``python bench/bench_draws.py OUT [--draws 1 2 3 5] [--arm visible1]``
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from guardrail_eval.results import QueryResult, load_results
from guardrail_eval.stats import bootstrap_ci

MEASURES = ("correct", "buggy", "silent buggy")


def _outcome(entry: QueryResult) -> dict[str, float]:
    """Acted on correct, on buggy, and on buggy silently, as 0/1, for one (draw, query)."""
    acted = bool(entry.top_results)
    correct = acted and entry.ranked()[0].passes_all_tests
    buggy = acted and not correct
    silent = bool((entry.model_extra or {}).get("silent"))
    return {
        "correct": float(correct),
        "buggy": float(buggy),
        "silent buggy": float(buggy and silent),
    }


def _by_query(path: Path) -> dict[str, list[dict[str, float]]]:
    """Each query's outcomes, in draw order."""
    entries = sorted(
        load_results(path).per_query, key=lambda e: (e.model_extra or {}).get("draw", 0)
    )
    found: dict[str, list[dict[str, float]]] = {}
    for entry in entries:
        found.setdefault(entry.query_id, []).append(_outcome(entry))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="a `guardrail eval --out` folder")
    parser.add_argument("--draws", type=int, nargs="+", default=[1, 2, 3, 5])
    parser.add_argument("--arm", default="visible1", help="the visible setting's arms to read")
    args = parser.parse_args()
    summary = json.loads((args.out / "summary.json").read_text(encoding="utf-8"))
    arms = [
        arm
        for arm in summary["arms"]
        if arm["role"] == "result" and f"+{args.arm}" in arm["name"] and arm["draws"] > 1
    ]
    print(f"{'arm':34s} {'k':>2s} " + " ".join(f"{m:>22s}" for m in MEASURES))
    for arm in arms:
        per_query = _by_query(args.out / arm["results_file"])
        widths: dict[int, dict[str, float]] = {}
        rows: list[tuple[int, dict[str, tuple[float, float]]]] = []
        for k in sorted(d for d in args.draws if d <= arm["draws"]):
            cells = {}
            for measure in MEASURES:
                means = [np.mean([o[measure] for o in runs[:k]]) for runs in per_query.values()]
                interval = bootstrap_ci(means)
                cells[measure] = (interval.estimate, interval.high - interval.low)
            widths[k] = {m: w for m, (_, w) in cells.items()}
            rows.append((k, cells))
        most = widths[max(widths)]
        for k, cells in rows:
            shown = " ".join(
                f"{100 * mean:5.1f}% +-{50 * width:4.1f} ({width / most[m] if most[m] else 1:.2f}x)"
                for m, (mean, width) in cells.items()
            )
            print(f"{arm['name']:34s} {k:2d} {shown}")


if __name__ == "__main__":
    main()
