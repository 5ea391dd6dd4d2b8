"""Benchmark: does ``verified`` mean on real libraries what it means on a benchmark pool? (issue 8)

For each pinned sdist (``--sdist NAME==VERSION``, ``--sdists FILE``; default the pins of
``realcode.sdists``), downloaded once into ``--cache``:

1. index the whole library with ``guardrail index`` (a temporary Chroma dir; tests left out);
2. ground truth: the stdlib doctest of every indexed function in its real imported module, run
   in one container per library (``realcode.groundtruth``; library code runs only there); a
   doctest that passes without ever running the function's code (every call ``+SKIP``, the
   examples call another name, or the module's name is bound to another module's definition) is
   ``unexercised``, counted apart and not in the ground truth;
3. ``guardrail verify --stored --json`` on the same index: guardrail's verdicts; the headline is
   the share of real-doctest-passing functions it verifies, and the list it calls ``failed``;
4. single-line mutants of the passing functions (``realcode.mutants``), judged by the gate
   against the function's stored tests (mutant text, the original's metadata) and by the real
   doctest with the mutant patched into the real module;
5. agent queries with tests (``realcode/queries.json``): top-1 of plain similarity vs the gate
   (rerank, the CLI's default fetch_k); skipped, with a note, for a library that has none.

Prints Markdown tables and writes every record as JSON. Not run by the test suite (it downloads).
Usage, after ``scripts/docker-up``::

    python bench/bench_realcode.py [--sdist NAME==VERSION]... [--sdists FILE] [--cache DIR]
        [--out FILE] [--library NAME]... [--mutants 3] [--image IMAGE]

The cache holds each sdist and its index by name and version, and the results by the set of
pins (``CACHE/results-<digest of the pins>.json``), so runs on different sets never collide.
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from realcode.groundtruth import DoctestItem, RealOutcome, TestsItem, run_real
from realcode.mutants import plan_mutants
from realcode.queries import QUERIES_FILE, Query, load_queries
from realcode.results import (
    FunctionRecord,
    LibraryResult,
    MutantRecord,
    QueryRecord,
    combined,
    markdown_tables,
    records,
    summarize,
)
from realcode.sdists import SdistError, fetch, import_root, module_of, pins_key, read_pins

from guardrail.gate import Candidate, Gate
from guardrail.index import CodeIndex, Snippet, minilm_embedding
from guardrail.index.snippet import decode_metadata
from guardrail.sandbox.image import default_image
from guardrail.sources import resolve
from guardrail.verdict import Verdict

CLI = [sys.executable, "-c", "from guardrail.cli.app import main; main()"]
CHUNK = 64  # candidates per gate call: progress on stderr, bounded memory


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def default_fetch_k() -> int:
    """The fetch_k ``guardrail search`` uses by default (whatever it is when the bench runs)."""
    from guardrail.cli.search import search

    value = inspect.signature(search).parameters["fetch_k"].default
    return int(value)


def guardrail_cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*CLI, *arguments], capture_output=True, text=True, check=False)


def snippet_key(snippet_file: str, qualified_name: str, module: Any, root: Path) -> str:
    """``module:qualified_name``, from the ``module`` metadata when the index records it."""
    name = module if isinstance(module, str) and module else module_of(snippet_file, root)
    return f"{name}:{qualified_name}"


def make_gate(image: str, root: Path) -> Gate:
    """A gate without cache; given ``context_root`` when this guardrail's Gate takes it."""
    from guardrail.sandbox.docker import DockerSandbox

    options: dict[str, Any] = {"cache": False}
    if "context_root" in inspect.signature(Gate).parameters:
        options["context_root"] = root
    return Gate(DockerSandbox(image=image), **options)


def judge(gate: Gate, candidates: list[Candidate]) -> list[Verdict]:
    """The gate's verdict per candidate against its stored tests, in order."""
    verdicts: list[Verdict] = []
    for start in range(0, len(candidates), CHUNK):
        chunk = candidates[start : start + CHUNK]
        specs = [resolve(c).spec for c in chunk]
        verdicts += [item.verdict for item in gate.gate(chunk, specs).judged]
        if len(candidates) > CHUNK:
            log(f"    judged {len(verdicts)}/{len(candidates)}")
    return verdicts


def candidate_of(snippet: Snippet, code: str | None = None) -> Candidate:
    """A candidate as the index hands it over: the snippet's metadata, ``code`` as its text."""
    metadata = decode_metadata(snippet.to_metadata())
    return Candidate(code=code or snippet.code, id=snippet.index_id, metadata=metadata)


def stored_verdicts(
    index_dir: Path, collection: str, image: str, root: Path
) -> dict[tuple[str, int], Any]:
    """``guardrail verify --stored --json`` rows by (``module:qualified_name``, first line)."""
    done = guardrail_cli(
        "verify",
        "--stored",
        "--json",
        "--no-cache",
        "--image",
        image,
        "--path",
        str(index_dir),
        "--collection",
        collection,
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(f"verify --stored exited {done.returncode}: {done.stderr[-2000:]}")
    rows = json.loads(done.stdout)["snippets"]
    return {
        (snippet_key(row["file"], row["qualified_name"], row.get("module"), root), _line(row)): row
        for row in rows
    }


def _line(row: dict[str, Any]) -> int:
    return int(row.get("line", row.get("start_line", 0)))


def index_dir_for(cache: Path, name: str, version: str) -> Path:
    """A persistent index folder per library and version of guardrail's indexing code.

    ``guardrail index`` on an index it already holds embeds only what changed, so a re-run is
    cheap; any change to ``guardrail/index/`` or ``guardrail/reach.py`` (which of a method's
    examples are its tests) gets a fresh folder, never a stale index.
    """
    import guardrail.index
    import guardrail.reach

    digest = hashlib.sha256()
    sources = sorted(Path(guardrail.index.__file__).parent.glob("*.py"))
    for source in [*sources, Path(guardrail.reach.__file__)]:  # reach decides methods' tests
        digest.update(source.name.encode() + b"\0" + source.read_bytes())
    return cache / "index" / f"{name}-{version}-{digest.hexdigest()[:12]}"


def source_lines(snippet: Snippet, root: Path) -> list[str]:
    path = Path(snippet.file)
    return (path if path.is_absolute() else root / path).read_text(encoding="utf-8").split("\n")


def run_library(
    name: str, version: str, args: argparse.Namespace, queries: list[Query], work: Path
) -> LibraryResult:
    result = LibraryResult(library=name, version=version)
    started = time.perf_counter()
    root = import_root(fetch(args.cache, name, version).resolve())
    index_dir = index_dir_for(args.cache, name, version) if args.keep_index else work / name
    done = guardrail_cli("index", str(root), "--path", str(index_dir), "--collection", name)
    if done.returncode != 0:
        raise RuntimeError(f"guardrail index exited {done.returncode}: {done.stderr[-2000:]}")
    result.seconds["index"] = time.perf_counter() - started
    index = CodeIndex(name, path=index_dir, embedding_function=args.embedding, create=False)
    snippets = list(index.snippets())
    keys = [_candidate_key(candidate_of(s), root) for s in snippets]
    log(f"{name}=={version}: {len(snippets)} snippets indexed")

    mark = time.perf_counter()
    items = [
        DoctestItem.of(str(n), key, lines=(s.start_line, s.end_line))
        for n, (s, key) in enumerate(zip(snippets, keys, strict=True))
    ]
    real = run_real(root, items, image=args.image, name=name)
    result.seconds["ground_truth"] = time.perf_counter() - mark

    mark = time.perf_counter()
    rows = stored_verdicts(index_dir, name, args.image, root)
    result.seconds["verify_stored"] = time.perf_counter() - mark
    for n, (snippet, key) in enumerate(zip(snippets, keys, strict=True)):
        row = rows[(key, snippet.start_line)]
        word = _real_word(real[str(n)])
        result.functions.append(FunctionRecord(key, word, row["status"], row["reason"], _why(row)))
    passing = [n for n, f in enumerate(result.functions) if f.real == "pass"]
    log(f"  {len(passing)} functions pass their real doctest")

    gate = make_gate(args.image, root)
    try:
        mark = time.perf_counter()
        result.mutants = mutants(gate, root, args, [(snippets[n], keys[n]) for n in passing])
        result.seconds["mutants"] = time.perf_counter() - mark
        mark = time.perf_counter()
        mine = [q for q in queries if q.library == name]
        if mine:
            result.queries = agent_queries(gate, index, root, args, mine)
        else:
            log(f"  {name}: no hand-written queries in {QUERIES_FILE.name}: query part skipped")
        result.seconds["queries"] = time.perf_counter() - mark
    finally:
        gate.close()
    result.seconds["total"] = time.perf_counter() - started
    return result


def _why(row: dict[str, Any]) -> str:
    """What a verdict that is not ``verified`` said: its message, and the first test that did
    not pass (its outcome and detail), for classifying the misses."""
    if row["status"] == "verified":
        return ""
    verdict = row.get("verdict") or {}
    tests = [t for t in verdict.get("tests", []) if t.get("outcome") != "pass"]
    said = str(verdict.get("message", ""))
    if tests:
        said += f" | {tests[0].get('test', '')[:300]} -> {tests[0].get('outcome')}:"
        said += f" {str(tests[0].get('detail', ''))[:500]}"
    return said


def _real_word(outcome: RealOutcome) -> str:
    """The function's real outcome; ``unexercised``: its doctest passes without running it, or
    its name in the module is bound to another definition (another module's, or another ``def``
    of its file: the doctest ran that)."""
    if outcome.passed and not (outcome.exercised and outcome.here):
        return "unexercised"
    return outcome.outcome


def mutants(
    gate: Gate, root: Path, args: argparse.Namespace, targets: list[tuple[Snippet, str]]
) -> list[MutantRecord]:
    planned = []
    for snippet, key in targets:
        lines = source_lines(snippet, root)
        for mutant in plan_mutants(
            snippet.code,
            snippet.entry_point,
            snippet.start_line,
            snippet.end_line,
            lines,
            args.mutants,
        ):
            planned.append((snippet, key, mutant))
    log(f"  {len(planned)} mutants of {len(targets)} functions")
    candidates = [candidate_of(snippet, mutant.code) for snippet, _, mutant in planned]
    verdicts = judge(gate, candidates)
    items = [
        DoctestItem.of(str(n), key, (mutant.line, mutant.text))
        for n, (_, key, mutant) in enumerate(planned)
    ]
    real = run_real(root, items, image=args.image, name=f"mutants-{root.name}")
    return [
        MutantRecord(
            key,
            str(mutant.bug_type),
            mutant.description,
            real[str(n)].outcome,
            verdict.status.value,
            verdict.reason.value,
        )
        for n, ((_, key, mutant), verdict) in enumerate(zip(planned, verdicts, strict=True))
    ]


def agent_queries(
    gate: Gate, index: CodeIndex, root: Path, args: argparse.Namespace, queries: list[Query]
) -> list[QueryRecord]:
    checks = [TestsItem(str(n), q.module, q.qualname, q.tests) for n, q in enumerate(queries)]
    valid: dict[str, RealOutcome] = run_real(root, checks, image=args.image, name=f"q-{root.name}")
    out = []
    for n, query in enumerate(queries):
        if not valid[str(n)].passed:
            log(f"  query tests do not pass on the real function: {query.query!r}: {valid[str(n)]}")
        retrieved = index.search(query.query, k=args.fetch_k)
        keys = [_candidate_key(c, root) for c in retrieved]
        specs = [resolve(c, list(query.tests)).spec for c in retrieved]
        mark = time.perf_counter()
        gated = gate.gate(retrieved, specs)
        seconds = time.perf_counter() - mark
        judged = gated.judged
        top = gated.kept[0] if gated.kept else None
        rank = keys.index(query.expect) + 1 if query.expect in keys else None
        expected = judged[rank - 1].verdict if rank else None
        out.append(
            QueryRecord(
                query=query.query,
                expect=query.expect,
                tests_valid=valid[str(n)].passed,
                ungated_top=keys[0] if keys else None,
                gated_top=_candidate_key(top.candidate, root) if top else None,
                gated_top_status=top.verdict.status.value if top else None,
                expect_rank=rank,
                expect_status=f"{expected.status.value}/{expected.reason.value}"
                if expected
                else None,
                gate_seconds=seconds,
            )
        )
    return out


def _candidate_key(candidate: Candidate, root: Path) -> str:
    meta = candidate.metadata
    return snippet_key(
        str(meta.get("file", "")), str(meta.get("qualified_name", "")), meta.get("module"), root
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    cache = Path.home() / ".cache/guardrail-bench/realcode"
    parser.add_argument(
        "--cache",
        type=Path,
        default=cache,
        help="where the sdists are downloaded and unpacked (kept)",
    )
    parser.add_argument(
        "--sdist",
        action="append",
        default=[],
        metavar="NAME==VERSION",
        help="a pinned sdist to measure (repeatable; default: the bench's own pins)",
    )
    parser.add_argument(
        "--sdists",
        action="append",
        default=[],
        type=Path,
        metavar="FILE",
        help="a file of NAME==VERSION pins, one a line (# comments)",
    )
    parser.add_argument(
        "--out", type=Path, help="JSON results (default: CACHE/results-<pins digest>.json)"
    )
    parser.add_argument(
        "--library", action="append", help="only this library of the pins (repeatable)"
    )
    parser.add_argument("--mutants", type=int, default=3, help="mutants per passing function")
    parser.add_argument("--image", default=default_image(), help="sandbox image (python3)")
    parser.add_argument(
        "--fresh-index",
        dest="keep_index",
        action="store_false",
        help="index into a temporary folder (default: a cached one, re-indexed incrementally)",
    )
    parser.add_argument("--fetch-k", type=int, default=default_fetch_k())
    args = parser.parse_args()
    try:
        pins = read_pins(args.sdist, args.sdists)
    except SdistError as exc:
        parser.error(str(exc))
    unknown = sorted(set(args.library or ()) - set(pins))
    if unknown:
        parser.error(f"--library {', '.join(unknown)}: not among the pins {sorted(pins)}")
    libraries = [name for name in pins if not args.library or name in args.library]
    queries = load_queries()  # every library in the file must have enough: checked here
    args.embedding = minilm_embedding()
    results = []
    with tempfile.TemporaryDirectory(prefix="bench-realcode-") as work:
        for name in libraries:
            results.append(run_library(name, pins[name], args, queries, Path(work)))
    summaries = [summarize(r) for r in results]
    if len(results) > 1:
        summaries.append(summarize(combined(results)))
    out = args.out or args.cache / f"results-{pins_key({n: pins[n] for n in libraries})}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload: dict[str, Any] = {r.library: records(r) for r in results}
    payload["summaries"] = summaries
    out.write_text(json.dumps(payload, indent=1))
    print(markdown_tables(summaries))
    for s in summaries[: len(results)]:  # the combined row's lists repeat the libraries'
        print(f"\n{s['library']}: real-doctest-passing functions: {s['verdicts_of_passing']}")
        print(f"  all snippets: {s['verdicts_all']}")
        print(f"  equivalent mutants guardrail verified: {s['mutants_equivalent_verified']}")
        for label in (
            "correct_failed",
            "mutants_verified_while_real_fails",
            "gate_worse",
            "gate_better",
            "unrelated_verified",
            "queries_invalid",
        ):
            if s[label]:
                shown = ", ".join(s[label][:12]) + (" ..." if len(s[label]) > 12 else "")
                print(f"  {label} ({len(s[label])}): {shown}")
    print(f"\nresults: {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
