"""Benchmark: how many candidates to retrieve (``fetch_k``) so the gate sees the right function.

Downloads pinned sdists of three pure-Python libraries (``pip download --no-binary :all:``),
indexes each with the bundled MiniLM (tests left out, as ``guardrail index`` does by default),
and asks each 20-odd realistic agent queries, each naming the function it means. Reports the
rank of the intended function, recall@k for k in 5, 10, 20, 30, 50, and the gate's cost per k:
the sandbox jobs it takes per query (candidates with stored tests, counted over every query)
and the wall time of a warm gate judging the top k of a sample of queries (two per library,
verdict cache off; median and spread over rounds), per query.

Not run by the test suite (it downloads). Usage, after ``scripts/docker-up``::

    python bench/bench_fetch_k.py [--workdir DIR] [--rounds 3] [--no-gate]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from realcode.sdists import SDISTS, fetch, module_of

from guardrail.gate import Candidate, Gate
from guardrail.index import CodeIndex, minilm_embedding, split_tree
from guardrail.sources import resolve

KS = (5, 10, 20, 30, 50)
TIMED_PER_LIBRARY = 2  # queries per library whose top k the gate judges under the clock

# query -> "module:qualified_name" of the function an agent asking it wants.
QUERIES: dict[str, dict[str, str]] = {
    "more-itertools": {
        "split an iterable into chunks of n": "more_itertools.more:chunked",
        "sliding window of width n over a sequence": "more_itertools.more:windowed",
        "flatten a nested list of lists of any depth": "more_itertools.more:collapse",
        "get the only element of an iterable, error if there are more": "more_itertools.more:one",
        "first item of an iterable or a default if it is empty": "more_itertools.more:first",
        "last item of an iterable": "more_itertools.more:last",
        "count how many items an iterator yields": "more_itertools.more:ilen",
        "split a list into n parts of nearly equal size": "more_itertools.more:divide",
        "group consecutive numbers into runs like 1,2,3 then 7,8": (
            "more_itertools.more:consecutive_groups"
        ),
        "insert a separator element between every item": "more_itertools.more:intersperse",
        "peek at the first items of an iterator without consuming them": "more_itertools.more:spy",
        "sort several lists together by the values of one of them": (
            "more_itertools.more:sort_together"
        ),
        "check whether all elements of an iterable are distinct": (
            "more_itertools.more:all_unique"
        ),
        "minimum and maximum of an iterable in one pass": "more_itertools.more:minmax",
        "mark whether each item is the first or the last one": "more_itertools.more:mark_ends",
        "split an iterable into pieces wherever a predicate is true": (
            "more_itertools.more:split_at"
        ),
        "all unique permutations of a list with repeated items": (
            "more_itertools.more:distinct_permutations"
        ),
        "all partitions of a set into non-empty subsets": "more_itertools.more:set_partitions",
        "take the first n items of an iterable as a list": "more_itertools.recipes:take",
        "last n items of an iterable": "more_itertools.recipes:tail",
        "group items into fixed-length tuples with a fill value": (
            "more_itertools.recipes:grouper"
        ),
        "interleave several iterables taking one item from each in turn": (
            "more_itertools.recipes:roundrobin"
        ),
        "split items into two lists: those failing and those passing a predicate": (
            "more_itertools.recipes:partition"
        ),
        "all subsets of a collection": "more_itertools.recipes:powerset",
        "remove duplicates while keeping the original order": (
            "more_itertools.recipes:unique_everseen"
        ),
        "first element that satisfies a predicate": "more_itertools.recipes:first_true",
        "prime numbers below n": "more_itertools.recipes:sieve",
        "prime factors of an integer": "more_itertools.recipes:factor",
        "transpose a matrix given as rows": "more_itertools.recipes:transpose",
        "check whether every element of an iterable is equal": ("more_itertools.recipes:all_equal"),
    },
    "toolz": {
        "merge several dictionaries into one": "toolz.dicttoolz:merge",
        "apply a function to every value of a dict": "toolz.dicttoolz:valmap",
        "apply a function to every key of a dict": "toolz.dicttoolz:keymap",
        "keep only the dict entries whose value satisfies a predicate": (
            "toolz.dicttoolz:valfilter"
        ),
        "return a copy of a dict with one key set to a new value": "toolz.dicttoolz:assoc",
        "return a copy of a dict without some keys": "toolz.dicttoolz:dissoc",
        "set a value deep in nested dictionaries by a list of keys": ("toolz.dicttoolz:assoc_in"),
        "get a value from nested dictionaries by a path of keys, with a default": (
            "toolz.dicttoolz:get_in"
        ),
        "compose functions right to left": "toolz.functoolz:compose",
        "pass a value through a sequence of functions": "toolz.functoolz:pipe",
        "cache the results of a function call": "toolz.functoolz:memoize",
        "negate a predicate function": "toolz.functoolz:complement",
        "swap the first two arguments of a function": "toolz.functoolz:flip",
        "group a collection into a dict of lists by a key function": ("toolz.itertoolz:groupby"),
        "count how often each item occurs": "toolz.itertoolz:frequencies",
        "merge already sorted sequences into one sorted sequence": ("toolz.itertoolz:merge_sorted"),
        "drop the first n items of a sequence": "toolz.itertoolz:drop",
        "every nth item of a sequence": "toolz.itertoolz:take_nth",
        "concatenate a sequence of sequences lazily": "toolz.itertoolz:concat",
        "split a sequence into tuples of length n, the last one shorter": (
            "toolz.itertoolz:partition_all"
        ),
        "the k largest elements of a sequence": "toolz.itertoolz:topk",
        "repeatedly apply a function to a value, yielding each result": ("toolz.itertoolz:iterate"),
        "reduce items grouped by a key without building the groups": ("toolz.itertoolz:reduceby"),
        "pick one field from every element of a list of dicts": "toolz.itertoolz:pluck",
        "join two sequences on matching keys like SQL": "toolz.itertoolz:join",
        "prepend one element to a sequence": "toolz.itertoolz:cons",
        "check that a sequence has no duplicate elements": "toolz.itertoolz:isdistinct",
        "running totals of a sequence, like an accumulate": "toolz.itertoolz:accumulate",
    },
    "boltons": {
        "split a list into chunks of a given size": "boltons.iterutils:chunked",
        "split a list on a separator value into sublists": "boltons.iterutils:split",
        "iterate over overlapping pairs of a sequence": "boltons.iterutils:pairwise",
        "a float range with a step, like range for floats": "boltons.iterutils:frange",
        "exponential backoff delays between retries": "boltons.iterutils:backoff",
        "group values into a dict of buckets by a key function": ("boltons.iterutils:bucketize"),
        "items that occur more than once in a list": "boltons.iterutils:redundant",
        "transform nested dicts and lists recursively with a visit function": (
            "boltons.iterutils:remap"
        ),
        "look up a value in nested data by a tuple of keys and indexes": (
            "boltons.iterutils:get_path"
        ),
        "sort a list of values of mixed types that do not compare": (
            "boltons.iterutils:untyped_sorted"
        ),
        "convert CamelCase to under_score": "boltons.strutils:camel2under",
        "turn a title into a URL slug": "boltons.strutils:slugify",
        "English ordinal suffix for a number, 1st 2nd 3rd": "boltons.strutils:ordinalize",
        "plural form of an English noun": "boltons.strutils:pluralize",
        "remove ANSI color escape codes from a string": "boltons.strutils:strip_ansi",
        "human readable byte size like 1.5 MB": "boltons.strutils:bytes2human",
        "gzip compress bytes": "boltons.strutils:gzip_bytes",
        "parse a string like 1,3-5,8 into a list of integers": ("boltons.strutils:parse_int_list"),
        "replace several substrings in one pass": "boltons.strutils:multi_replace",
        "check whether a string is a valid UUID": "boltons.strutils:is_uuid",
        "limit a number to a range between a minimum and a maximum": ("boltons.mathutils:clamp"),
        "parse a duration string like 1d 2h 3m into a timedelta": (
            "boltons.timeutils:parse_timedelta"
        ),
        "describe how long ago a datetime was, like 3 hours ago": (
            "boltons.timeutils:relative_time"
        ),
        "iterate over the dates between two dates": "boltons.timeutils:daterange",
        "create a directory and its parents, no error if it exists": ("boltons.fileutils:mkdir_p"),
        "find files matching a glob pattern recursively under a directory": (
            "boltons.fileutils:iter_find_files"
        ),
        "parse a URL into its parts": "boltons.urlutils:parse_url",
        "find all links in a block of text": "boltons.urlutils:find_all_links",
    },
}


def ranks_for(index: CodeIndex, root: Path, queries: dict[str, str]) -> dict[str, int | None]:
    """1-based rank of the intended function among the top max(KS) results (None: missed)."""
    ranks: dict[str, int | None] = {}
    for query, target in queries.items():
        results = index.search(query, k=max(KS))
        names = [
            f"{module_of(str(c.metadata['file']), root)}:{c.metadata['qualified_name']}"
            for c in results
        ]
        ranks[query] = names.index(target) + 1 if target in names else None
    return ranks


def jobs_per_query(top: list[list[Candidate]], k: int) -> float:
    """Mean number of the top ``k`` that carry stored tests (the others cost no sandbox job)."""
    jobs = sum(1 for results in top for c in results[:k] if resolve(c).spec is not None)
    return jobs / len(top)


def gate_seconds(gate: Gate, timed: list[list[Candidate]], k: int, rounds: int) -> list[float]:
    """Wall seconds per query for the gate to judge the top ``k`` of each ``timed`` query."""
    candidates = [c for results in timed for c in results[:k]]
    specs = [resolve(c).spec for c in candidates]
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        gate.verify([c.code for c in candidates], specs)
        times.append((time.perf_counter() - start) / len(timed))
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workdir", type=Path, help="where sdists and the index go (kept)")
    parser.add_argument("--rounds", type=int, default=3, help="gate timing rounds per k")
    parser.add_argument("--no-gate", action="store_true", help="skip the gate timing")
    args = parser.parse_args()
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="bench-fetch-k-"))
    workdir.mkdir(parents=True, exist_ok=True)
    embedding = minilm_embedding()
    all_ranks: dict[str, int | None] = {}
    top: list[list[Candidate]] = []
    timed: list[list[Candidate]] = []
    for name, version in SDISTS.items():
        root = fetch(workdir, name, version)
        tree = split_tree(root)
        index = CodeIndex(name, path=workdir / "index", embedding_function=embedding)
        start = time.perf_counter()
        index.replace_files(tree.files)
        print(
            f"{name}=={version}: {len(tree.snippets)} snippets from {len(tree.files)} files"
            f" ({tree.excluded} test files left out), indexed in"
            f" {time.perf_counter() - start:.0f} s"
        )
        indexed = {f"{module_of(s.file, root)}:{s.qualified_name}" for s in tree.snippets}
        unknown = sorted(set(QUERIES[name].values()) - indexed)
        if unknown:
            raise SystemExit(f"{name}: intended functions not in the index: {unknown}")
        ranks = ranks_for(index, root, QUERIES[name])
        for query, rank in ranks.items():
            print(f"  {rank if rank else '>50':>4}  {query}  -> {QUERIES[name][query]}")
        all_ranks.update({f"{name}: {q}": r for q, r in ranks.items()})
        results = [index.search(query, k=max(KS)) for query in QUERIES[name]]
        top += results
        timed += results[:TIMED_PER_LIBRARY]
    found = [rank for rank in all_ranks.values() if rank is not None]
    print(f"\n{len(all_ranks)} queries; intended function found in top {max(KS)}: {len(found)}")
    print(f"rank: median {statistics.median(found)}, max {max(found)}")
    seconds: dict[int, list[float]] = {}
    if not args.no_gate:
        from guardrail.sandbox.docker import DockerSandbox

        with Gate(DockerSandbox(), cache=False) as gate:
            gate_seconds(gate, timed, min(KS), 1)  # warm-up: containers started, zygotes ready
            seconds = {k: gate_seconds(gate, timed, k, args.rounds) for k in KS}
    print("\n| k | recall@k | missed | sandbox jobs/query | gate s/query (median, min-max) |")
    print("| --- | --- | --- | --- | --- |")
    for k in KS:
        hits = sum(1 for rank in all_ranks.values() if rank is not None and rank <= k)
        row = f"| {k} | {hits / len(all_ranks):.3f} | {len(all_ranks) - hits} |"
        row += f" {jobs_per_query(top, k):.1f} |"
        times = seconds.get(k)
        if times:
            row += f" {statistics.median(times):.2f} ({min(times):.2f}-{max(times):.2f}) |"
        print(row if times else row + " - |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
