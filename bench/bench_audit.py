"""Benchmark: `guardrail audit` over a corpus of >= 10,000 functions on this machine.

The corpus is this machine's own CPython 3.11 standard library (``/usr/lib/python3.11``, the
same sources the sandbox image's ``python3`` runs), copied under a package of its own name,
``pystdlib`` (a snippet whose module is named like the standard library cannot be judged in
its module context), without its tests, ``idlelib``, ``lib2to3``, ``turtledemo``,
``ensurepip``, ``pydoc_data`` and ``site-packages``: about 13,000 functions and methods.

Phases, each timed: split (parse into snippets), index (embed with the bundled MiniLM into a
local Chroma index; an unchanged corpus embeds nothing on later runs, which is reported),
cluster (MinHash/LSH candidate pairs and their confirmation; repeated ``--repeat`` times for
median and spread), run (the differential runs in the sandbox), and the wall time of one whole
audit (read + cluster + run). The target is 10 minutes for the audit.

Usage: ``python bench/bench_audit.py [--work DIR] [--repeat 3] [--no-sandbox] [--no-index]
[--out FILE]`` after ``scripts/docker-up``. ``--no-index`` audits the split snippets without
embedding them (pairs confirmed by token edit distance alone): the audit's cost without the
index's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from guardrail.audit import audit_index, find_clusters
from guardrail.audit.differential import run_differential
from guardrail.gate import Gate
from guardrail.index import CodeIndex, minilm_embedding, split_tree
from guardrail.sandbox.docker import DockerSandbox

STDLIB = Path("/usr/lib/python3.11")
LEFT_OUT = ("test", "tests", "idlelib", "lib2to3", "turtledemo", "ensurepip", "pydoc_data")
PACKAGE = "pystdlib"


def corpus(work: Path) -> Path:
    """The copied standard library (made once); returns the sys.path root holding it."""
    root = work / "corpus"
    target = root / PACKAGE
    if not target.is_dir():
        staging = root / f".{PACKAGE}"
        shutil.rmtree(staging, ignore_errors=True)
        shutil.copytree(
            STDLIB,
            staging,
            ignore=shutil.ignore_patterns(
                *LEFT_OUT, "site-packages", "dist-packages", "config-3.11*", "__pycache__", "*.so"
            ),
            symlinks=False,
            ignore_dangling_symlinks=True,
        )
        (staging / "__init__.py").write_text("", encoding="utf-8")
        staging.rename(target)
    return root


def spread(times: list[float]) -> str:
    if len(times) == 1:
        return f"{times[0]:.1f} s"
    return (
        f"median {statistics.median(times):.1f} s, min {min(times):.1f}, max {max(times):.1f}"
        f" ({len(times)} runs)"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/bench-audit"))
    parser.add_argument("--repeat", type=int, default=3, help="clustering repetitions")
    parser.add_argument("--no-sandbox", action="store_true", help="stop after clustering")
    parser.add_argument(
        "--no-index",
        action="store_true",
        help="audit the split snippets without embedding them (pairs confirmed by tokens only)",
    )
    parser.add_argument("--inputs", type=int, default=20, help="inputs per cluster")
    parser.add_argument("--out", type=Path, help="write the numbers as JSON")
    options = parser.parse_args()
    numbers: dict[str, Any] = {}

    root = corpus(options.work)
    started = time.perf_counter()
    tree = split_tree(root / PACKAGE)
    numbers["split_s"] = round(time.perf_counter() - started, 1)
    numbers["files"] = len(tree.files)
    numbers["functions"] = len(tree.snippets)
    print(f"corpus: {len(tree.snippets)} functions in {len(tree.files)} files", flush=True)

    index = None
    if options.no_index:
        snippets, vectors = list(tree.snippets), None
    else:
        embedding = minilm_embedding()
        index = CodeIndex("bench-audit", path=options.work / "index", embedding_function=embedding)
        started = time.perf_counter()
        report = index.replace_files(tree.files)
        numbers["index_s"] = round(time.perf_counter() - started, 1)
        numbers["index_embedded"] = report.added + report.updated
        print(f"index: {numbers['index_s']} s, {numbers['index_embedded']} embedded", flush=True)
        snippets = list(index.snippets())
        vectors = index.embeddings([s.index_id for s in snippets])
    cluster_times: list[float] = []
    clusters = None
    for _ in range(options.repeat):
        started = time.perf_counter()
        clusters = find_clusters(snippets, vectors)
        cluster_times.append(time.perf_counter() - started)
    assert clusters is not None
    numbers["cluster_s"] = [round(t, 1) for t in cluster_times]
    numbers["compared"] = clusters.compared
    numbers["candidate_pairs"] = clusters.candidate_pairs
    numbers["confirmed_pairs"] = clusters.confirmed_pairs
    numbers["clusters"] = len(clusters.clusters)
    numbers["largest_cluster"] = max((len(c.members) for c in clusters.clusters), default=0)
    print(
        f"cluster: {spread(cluster_times)}; {clusters.compared} compared,"
        f" {clusters.candidate_pairs} candidate pairs (of"
        f" {clusters.compared * (clusters.compared - 1) // 2:,} possible),"
        f" {clusters.confirmed_pairs} confirmed, {len(clusters.clusters)} clusters (largest"
        f" {numbers['largest_cluster']})",
        flush=True,
    )
    if not options.no_sandbox:
        with Gate(DockerSandbox(), cache=False) as gate:
            started = time.perf_counter()
            if index is not None:
                audit = audit_index(index, gate, inputs=options.inputs, target=str(root))
                seconds = audit.seconds
                totals = (audit.counts.pairs_run, audit.counts.pairs_not_run)
                runs = audit.counts.sandbox_runs
                findings = [f.severity.value for f in audit.findings]
            else:
                ran = run_differential(clusters.clusters, gate, inputs=options.inputs)
                seconds = {"run": round(time.perf_counter() - started, 1)}
                totals = (ran.pairs_run, dict(ran.pairs_not_run))
                runs = ran.sandbox_runs
                findings = [f.severity.value for f in ran.findings]
            numbers["audit_wall_s"] = round(time.perf_counter() - started, 1)
        numbers["audit_phases_s"] = seconds
        numbers["pairs_run"], numbers["pairs_not_run"] = totals
        numbers["sandbox_runs"] = runs
        numbers["findings"] = {level: findings.count(level) for level in ("high", "medium", "low")}
        print(
            f"audit: {numbers['audit_wall_s']} s wall ({seconds}); {totals[0]} pairs run,"
            f" not run {totals[1]}; {runs} sandbox runs;"
            f" findings {numbers['findings']}",
            flush=True,
        )
    if options.out is not None:
        options.out.write_text(json.dumps(numbers, indent=2) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
