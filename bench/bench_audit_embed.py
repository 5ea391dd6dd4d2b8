"""Benchmark: what ``guardrail audit PATH`` embeds, before (every function, into the index: now
``--index``) and now (only the functions LSH pairs up, in memory), side by side.

The corpus is real code from pinned sdists (downloaded once with ``pip download --no-binary
:all: --no-deps``): toolz 0.12.1, networkx 3.2.1 and sympy 1.12's ``core``, ``polys``,
``functions``, ``matrices``, ``printing``, ``physics`` and ``solvers``: 13,288 functions and
methods. Before: `CodeIndex.add` of every function into a fresh in-memory index with the bundled
MiniLM (what indexing PATH first did; Chroma writes included); with ``--sample N`` a random N of
them, and the time for the whole corpus is projected from that rate. Now: `find_clusters` with
the audit's `embedder` over the whole corpus, which embeds the functions of LSH candidate pairs
only (the time includes the MinHash signatures). Rounds alternate between the two ways, so drift
in the machine's load hits both alike; CPU time is printed beside wall time (this machine is
shared, and its load moves wall times several-fold).

Usage: ``python bench/bench_audit_embed.py [--work DIR] [--sample 1000] [--repeat 1]``
(``--sample 0``: every function, about 15-60 minutes for the old way here).
"""

from __future__ import annotations

import argparse
import random
import shutil
import statistics
import subprocess
import sys
import tarfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import summary

from guardrail.audit import embedder, find_clusters
from guardrail.index import CodeIndex, Snippet, minilm_embedding, split_tree

SDISTS = ("toolz==0.12.1", "networkx==3.2.1", "sympy==1.12")
TREES = {  # sdist folder -> the packages (or sub-packages) copied into the corpus
    "toolz-0.12.1": ["toolz"],
    "networkx-3.2.1": ["networkx"],
    "sympy-1.12": [
        f"sympy/{part}"
        for part in ("core", "polys", "functions", "matrices", "printing", "physics", "solvers")
    ],
}


def corpus(work: Path) -> Path:
    """The corpus tree (made once from the pinned sdists)."""
    root = work / "corpus"
    if root.is_dir():
        return root
    downloads = work / "sdists"
    downloads.mkdir(parents=True, exist_ok=True)
    pip = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
    subprocess.run([*pip, "--dest", str(downloads), *SDISTS], check=True)
    staging = work / ".corpus"
    shutil.rmtree(staging, ignore_errors=True)
    for archive in sorted(downloads.glob("*.tar.gz")):
        with tarfile.open(archive) as tar:
            tar.extractall(downloads, filter="data")
    for folder, parts in TREES.items():
        for part in parts:
            shutil.copytree(downloads / folder / part, staging / part)
    staging.rename(root)
    return root


def before(snippets: list[Snippet], name: str) -> float:
    """Seconds to add ``snippets`` to a fresh in-memory index: every one is embedded."""
    index = CodeIndex(name, ephemeral=True, embedding_function=minilm_embedding())
    started = time.perf_counter()
    index.add(snippets)
    return time.perf_counter() - started


def now(snippets: list[Snippet]) -> tuple[float, int]:
    """Seconds for the audit's clustering with in-memory embedding, and how many it embedded."""
    started = time.perf_counter()
    report = find_clusters(snippets, embed=embedder(minilm_embedding()))
    return time.perf_counter() - started, report.embedded


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/guardrail-bench-embed"))
    parser.add_argument("--sample", type=int, default=1000, help="functions (0: all) before")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()

    tree = split_tree(corpus(options.work))
    every = tree.snippets
    sample = every
    if 0 < options.sample < len(every):
        sample = random.Random(options.seed).sample(every, options.sample)
    minilm_embedding()([sample[0].code])  # load the model outside the timings
    print(f"corpus: {len(every)} functions in {len(tree.files)} files")
    wall: dict[str, list[float]] = {"before": [], "now": []}
    cpu: dict[str, list[float]] = {"before": [], "now": []}
    embedded = 0
    for round_ in range(options.repeat):
        for way in ("before", "now") if round_ % 2 == 0 else ("now", "before"):
            clock = time.process_time()
            if way == "before":
                seconds = before(sample, f"bench-{round_}") * len(every) / len(sample)
            else:
                seconds, embedded = now(every)
            spent = (time.process_time() - clock) * (
                len(every) / len(sample) if way == "before" else 1
            )
            wall[way].append(seconds)
            cpu[way].append(spent)
            print(f"  round {round_ + 1} {way}: {seconds:.0f} s wall, {spent:.0f} s CPU (for"
                  f" the corpus{', projected' if way == 'before' and sample is not every else ''})",
                  flush=True)  # fmt: skip
    reference = statistics.median(wall["now"])
    print(f"{'way':38s} {'rounds':>6s} {'median':>9s} {'p95':>9s} {'min':>9s} {'max':>9s}"
          f" {'IQR':>8s} {'vs now':>10s}   (seconds of wall time for the corpus)")  # fmt: skip
    print(summary(f"before: all {len(every)} embedded", wall["before"], reference, digits=0))
    print(summary(f"now: {embedded} embedded", wall["now"], reference, digits=0))
    ratio = statistics.median(cpu["before"]) / statistics.median(cpu["now"])
    print(f"CPU time: before {statistics.median(cpu['before']):.0f} s, now"
          f" {statistics.median(cpu['now']):.0f} s ({ratio:.2f}x)")  # fmt: skip


if __name__ == "__main__":
    main()
