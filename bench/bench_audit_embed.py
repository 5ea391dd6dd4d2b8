"""Benchmark: embedding an audited tree into the index, in split order (before) and shortest first
(`guardrail.index.code_index.embedding_order`, now), side by side.

The corpus is real code from pinned sdists (downloaded once with ``pip download --no-binary
:all: --no-deps``): toolz 0.12.1, networkx 3.2.1 and sympy 1.12's ``core``, ``polys``,
``functions``, ``matrices``, ``printing``, ``physics`` and ``solvers``: 13,288 functions and
methods. Each round writes a sample of its snippets into a fresh in-memory `CodeIndex` with the
bundled MiniLM, through `CodeIndex.add` exactly as ``guardrail audit PATH`` and ``guardrail
index`` do (Chroma writes included); the old way is the same call with the order left as split.
Rounds alternate between the two ways, so drift in the machine's load hits both alike. The
vectors of both ways are compared (they must agree to float32 rounding).

Usage: ``python bench/bench_audit_embed.py [--work DIR] [--sample 2000] [--repeat 3]``
(``--sample 0``: every function; prints one row per way and the projected time for the corpus).
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

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing import summary

import guardrail.index.code_index as code_index
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


def embed(snippets: list[Snippet], *, ordered: bool, name: str) -> tuple[float, CodeIndex]:
    """Seconds to add ``snippets`` to a fresh in-memory index, the old way or the new."""
    keep = code_index.embedding_order
    if not ordered:
        code_index.embedding_order = list  # type: ignore[assignment]  # the order as split
    try:
        index = CodeIndex(name, ephemeral=True, embedding_function=minilm_embedding())
        started = time.perf_counter()
        index.add(snippets)
        return time.perf_counter() - started, index
    finally:
        code_index.embedding_order = keep


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, default=Path("/tmp/guardrail-bench-embed"))
    parser.add_argument("--sample", type=int, default=2000, help="functions per round (0: all)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    options = parser.parse_args()

    tree = split_tree(corpus(options.work))
    every = tree.snippets
    sample = every
    if 0 < options.sample < len(every):
        sample = random.Random(options.seed).sample(every, options.sample)
    minilm_embedding()([sample[0].code])  # load the model outside the timings
    print(f"corpus: {len(every)} functions in {len(tree.files)} files; {len(sample)} per round")
    times: dict[bool, list[float]] = {False: [], True: []}
    vectors: dict[bool, dict[str, list[float]]] = {}
    for round_ in range(options.repeat):
        for ordered in (False, True) if round_ % 2 == 0 else (True, False):
            seconds, index = embed(sample, ordered=ordered, name=f"bench-{round_}-{ordered:d}")
            times[ordered].append(seconds)
            vectors[ordered] = index.embeddings([s.index_id for s in sample])
            print(f"  round {round_ + 1} {'shortest first' if ordered else 'as split'}:"
                  f" {seconds:.1f} s", flush=True)  # fmt: skip
    drift = max(
        float(np.abs(np.asarray(vectors[True][key]) - np.asarray(vectors[False][key])).max())
        for key in vectors[True]
    )
    new = statistics.median(times[True]) * 1000
    header = f"{'way':38s} {'rounds':>6s} {'median':>9s} {'p95':>9s} {'min':>9s} {'max':>9s}"
    print(f"{header} {'IQR':>8s} {'vs new':>10s}   (ms per round of {len(sample)} functions)")
    print(summary("as split (before)", [t * 1000 for t in times[False]], new, digits=0))
    print(summary("shortest first (now)", [t * 1000 for t in times[True]], new, digits=0))
    for ordered, label in ((False, "before"), (True, "now")):
        rate = len(sample) / statistics.median(times[ordered])
        print(f"{label}: {rate:.1f} functions/s, {len(every) / rate / 60:.1f} min projected for"
              f" the {len(every)} functions")  # fmt: skip
    print(f"largest difference between the two ways' vectors: {drift:.2e}")


if __name__ == "__main__":
    main()
