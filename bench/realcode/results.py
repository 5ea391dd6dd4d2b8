"""The benchmark's arithmetic: per-library records in, headline numbers and a table out.

Pure (no Docker, no index): the records come from `bench_realcode.py`. Verdict reasons are kept
as ``status/reason`` words, so reasons added later (``missing_context``, ``missing_dependency``)
show up in the counts without a change here.
"""

from __future__ import annotations

import statistics
from collections import Counter
from dataclasses import asdict, dataclass, field
from typing import Any

__all__ = [
    "FunctionRecord",
    "LibraryResult",
    "MutantRecord",
    "QueryRecord",
    "combined",
    "markdown_tables",
    "records",
    "summarize",
]

VERIFIED = "verified"
FAILED = "failed"
# The real doctest ran examples (``unexercised``: it passed without running the function).
REAL_EXAMPLES = frozenset({"pass", "unexercised", "fail", "timeout"})


@dataclass(frozen=True, slots=True)
class FunctionRecord:
    """One indexed snippet: its real doctest outcome and guardrail's stored-tests verdict."""

    key: str  # module:qualified_name
    real: str  # pass, unexercised, fail, timeout, no_examples, error
    status: str
    reason: str
    detail: str = ""  # not verified: the verdict's message and its first unpassed test's detail


@dataclass(frozen=True, slots=True)
class MutantRecord:
    key: str
    bug_type: str
    description: str
    real: str
    status: str
    reason: str


@dataclass(frozen=True, slots=True)
class QueryRecord:
    """One agent query: what similarity put first, what the gate put first (and its verdict)."""

    query: str
    expect: str
    tests_valid: bool  # the query's tests pass on the real function in its real module
    ungated_top: str | None
    gated_top: str | None
    gated_top_status: str | None
    expect_rank: int | None  # 1-based among the fetch_k retrieved; None: not retrieved
    expect_status: str | None  # the gate's verdict on the intended function, status/reason
    gate_seconds: float = 0.0  # wall time of the gate judging the fetch_k retrieved


@dataclass(slots=True)
class LibraryResult:
    library: str
    version: str
    functions: list[FunctionRecord] = field(default_factory=list)
    mutants: list[MutantRecord] = field(default_factory=list)
    queries: list[QueryRecord] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)


def summarize(result: LibraryResult) -> dict[str, Any]:
    """The headline numbers of one library (JSON-ready)."""
    functions = result.functions
    passing = [f for f in functions if f.real == "pass"]
    verified = [f for f in passing if f.status == VERIFIED]
    mutants = result.mutants
    real_fails = [m for m in mutants if m.real != "pass"]
    valid = [q for q in result.queries if q.tests_valid]
    ungated = {q.query for q in valid if q.ungated_top == q.expect}
    gate_times = [q.gate_seconds for q in result.queries]
    gated = {q.query for q in valid if q.gated_top == q.expect}
    return {
        "library": result.library,
        "version": result.version,
        "indexed": len(functions),
        "with_doctests": sum(f.real in REAL_EXAMPLES for f in functions),
        "unresolved": sum(f.real == "error" for f in functions),
        "real_passing": len(passing),
        "real_unexercised": sum(f.real == "unexercised" for f in functions),
        "verdicts_all": _counts(functions),
        "verdicts_of_passing": _counts(passing),
        "verified_of_passing": len(verified),
        "verified_pct": _pct(len(verified), len(passing)),
        "correct_failed": sorted(f.key for f in passing if f.status == FAILED),
        "mutants": len(mutants),
        "mutants_real_fails": len(real_fails),
        "mutants_verified_while_real_fails": [
            f"{m.key} ({m.description})" for m in real_fails if m.status == VERIFIED
        ],
        "mutants_equivalent": len(mutants) - len(real_fails),
        "mutants_equivalent_verified": sum(
            m.real == "pass" and m.status == VERIFIED for m in mutants
        ),
        "queries": len(result.queries),
        "queries_valid": len(valid),
        "queries_invalid": sorted(q.query for q in result.queries if not q.tests_valid),
        "top1_ungated": len(ungated),
        "top1_gated": len(gated),
        "gate_worse": sorted(ungated - gated),
        "gate_better": sorted(gated - ungated),
        "unrelated_verified": sorted(
            f"{q.query} -> {q.gated_top}"
            for q in valid
            if q.gated_top_status == VERIFIED and q.gated_top != q.expect
        ),
        "gate_s_per_query": round(statistics.median(gate_times), 2) if gate_times else 0.0,
        "seconds": {key: round(value, 1) for key, value in result.seconds.items()},
    }


def combined(results: list[LibraryResult]) -> LibraryResult:
    """Every library's records as one (keys name their module, so they never collide)."""
    total = LibraryResult(library="all", version="")
    for result in results:
        total.functions += result.functions
        total.mutants += result.mutants
        total.queries += result.queries
        for key, seconds in result.seconds.items():
            total.seconds[key] = total.seconds.get(key, 0.0) + seconds
    return total


def records(result: LibraryResult) -> dict[str, Any]:
    """Everything measured for one library, for the JSON results file."""
    return {
        "summary": summarize(result),
        "functions": [asdict(f) for f in result.functions],
        "mutants": [asdict(m) for m in result.mutants],
        "queries": [asdict(q) for q in result.queries],
    }


def markdown_tables(summaries: list[dict[str, Any]]) -> str:
    """Two Markdown tables (verdicts of the real-doctest-passing functions; mutants, queries)."""
    reasons = sorted(
        {
            key
            for s in summaries
            for key in s["verdicts_of_passing"]
            if not key.startswith("verified/")
        }
    )
    head = ["library", "indexed", "with doctests", "never run by it", "real pass", "verified"]
    head += ["% verified"]
    head += [*reasons, "correct failed"]
    lines = [_row(head), _row(["---"] * len(head))]
    for s in summaries:
        cells = [f"{s['library']} {s['version']}".strip(), s["indexed"], s["with_doctests"]]
        cells += [s["real_unexercised"], s["real_passing"], s["verified_of_passing"]]
        cells += [f"{s['verified_pct']:.1f}"]
        cells += [s["verdicts_of_passing"].get(key, 0) for key in reasons]
        lines.append(_row([*cells, len(s["correct_failed"])]))
    head2 = ["library", "mutants", "real fails", "verified while real fails", "equivalent"]
    head2 += ["queries (valid)", "top-1 ungated", "top-1 gated", "gate worse", "gate better"]
    head2 += ["unrelated verified", "gate s/query (median)", "wall s"]
    lines += ["", _row(head2), _row(["---"] * len(head2))]
    for s in summaries:
        cells = [s["library"], s["mutants"], s["mutants_real_fails"]]
        cells += [len(s["mutants_verified_while_real_fails"]), s["mutants_equivalent"]]
        cells += [f"{s['queries']} ({s['queries_valid']})", s["top1_ungated"], s["top1_gated"]]
        cells += [len(s["gate_worse"]), len(s["gate_better"]), len(s["unrelated_verified"])]
        cells += [f"{s['gate_s_per_query']:.2f}", f"{s['seconds'].get('total', 0):.0f}"]
        lines.append(_row(cells))
    return "\n".join(lines)


def _counts(functions: list[FunctionRecord]) -> dict[str, int]:
    return dict(sorted(Counter(f"{f.status}/{f.reason}" for f in functions).items()))


def _pct(part: int, whole: int) -> float:
    return round(100.0 * part / whole, 1) if whole else 0.0


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"
