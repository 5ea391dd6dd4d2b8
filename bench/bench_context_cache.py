"""Benchmark: a warm search on a real library with and without the module-context caches.

Every candidate with module context ships its module, its packages and the in-tree modules its
imports reach; each must be read and its imports found. `guardrail.module_imports` keeps the
imports and syntax trees of each module text, and `guardrail.context.ModuleReads` shares one
call's reads between its candidates. This bench indexes a pinned sdist (toolz 1.0.0, pip
download), warms the verdict cache, then times the same queries in one process, alternating:

- ``cached``: as the gate runs (the caches warm from the previous round);
- ``cold parse``: the text caches emptied before each query (each module parsed again: what
  every query paid before the caches, minus the per-candidate re-reads `ModuleReads` removed).

Every verdict comes from the verdict cache, so no container runs: what is timed is retrieval and
preparing jobs. Prints median, p95, min, max, IQR and the ratio to ``cached``.
Usage: ``python bench/bench_context_cache.py [--rounds 9] [--workdir DIR]``.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

from realcode.sdists import fetch, import_root
from timing import summary

from guardrail import module_imports
from guardrail.cache import VerdictCache
from guardrail.gate import Gate
from guardrail.index import CodeIndex, minilm_embedding, split_tree
from guardrail.sandbox.docker import DockerSandbox
from guardrail.searching import gated_search

QUERIES = [
    "split a sequence into tuples of length n, the last one shorter",
    "merge dictionaries",
    "group a collection into a dict of lists by a key function",
    "count how often each item occurs",
    "pass a value through a sequence of functions",
]
HEADER = (
    f"{'way (ms a query)':38s} {'rounds':>6s}"
    + "".join(f" {name:>9s}" for name in ("p50", "p95", "min", "max"))
    + f" {'IQR':>8s} {'ratio':>11s}"
)


def search_all(index: CodeIndex, gate: Gate, *, cold: bool) -> float:
    """Milliseconds a query for `QUERIES`; ``cold`` empties the text caches before each."""
    started = time.perf_counter()
    for query in QUERIES:
        if cold:
            module_imports._cache.clear()
            module_imports._trees.clear()
        gated_search(index, gate, query, None, fetch_k=20)
    return (time.perf_counter() - started) * 1000 / len(QUERIES)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--workdir", type=Path, help="where the sdist and the index go (kept)")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-context-") as tmp:
        work = options.workdir or Path(tmp)
        tree = import_root(fetch(work / "sdists", "toolz", "1.0.0")) / "toolz"
        index = CodeIndex(
            "bench-context", path=work / "index", embedding_function=minilm_embedding()
        )
        index.replace_files(split_tree(tree).files)
        index.record_roots([str(tree.resolve())])
        with Gate(DockerSandbox(pool_size=2), cache=VerdictCache(work / "v.sqlite")) as gate:
            search_all(index, gate, cold=True)  # every verdict into the cache
            times: dict[str, list[float]] = {"cached": [], "cold parse": []}
            for _ in range(options.rounds):
                times["cold parse"].append(search_all(index, gate, cold=True))
                times["cached"].append(search_all(index, gate, cold=False))
        print(f"Python {sys.version.split()[0]}; toolz 1.0.0, {index.count()} snippets,"
              f" {len(QUERIES)} queries x 20 candidates, every verdict cached")  # fmt: skip
        print(HEADER)
        reference = sorted(times["cached"])[len(times["cached"]) // 2]
        for name, label in (("cached", "module texts cached (the gate)"),
                            ("cold parse", "every module parsed again")):  # fmt: skip
            print(summary(label, times[name], reference))


if __name__ == "__main__":
    main()
