"""Pool validation: a pool's labels checked against execution before anything is counted.

The release verified its pool by execution (every canonical passes its suite, every distractor
fails at least one test); a pool edited by hand or built elsewhere may not hold to that, and a
wrong label changes the metrics silently (a passing "distractor" ranked first is a miss that is
not one). `validate_pool` runs every query's canonical(s) and paired distractors against the
query's **full** suite, through a `RetryingSandbox` around the gate's sandbox and with the gate's
verdict cache, so the eval's ground truth later reuses the same verdicts. Execution contradicts
a label (`Contradiction`) when

- a canonical is not verified by its own tests: it failed, errored, timed out while busy, or
  could not be judged (``unverifiable``): the ground truth could never count it correct;
- a paired distractor passes every test: it is correct code labelled buggy;
- a canonical fails one of its query's visible units (`guardrail_eval.units`) run on its own:
  a visible draw of that unit would show the gate a test the correct code fails. So every
  canonical is proven to pass every one-unit visible draw (a draw of N units is their union).

A verdict the machine decided (a sandbox fault, a starved timeout: `guardrail_eval.faults`) is
never a contradiction, nor a confirmation: it stays a fault, listed in ``summary.json`` with the
run's own (``judged_by: pool validation``), and the results are incomplete (the CLI exits 4).
`PoolValidation.settle` refuses a pool with contradictions (`LabelError`, exit 2, every one with
its file and line), or with ``relabel`` returns the pool with the labels execution gives, each
change a `Relabelling` for ``summary.json`` and the report:

- a failing canonical leaves its query's correct ids; a query left with none is dropped;
- a passing distractor leaves the paired distractors, joins the correct ids and is labelled
  ``correct`` (its ``bug_type`` cleared);
- a unit a canonical fails leaves the query's units (``test_units``); a query left with none is
  dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePath
from typing import Any, Literal

from pydantic import BaseModel, Field

from guardrail.gate import Gate
from guardrail.verdict import Verdict
from guardrail_eval.errors import LabelError
from guardrail_eval.faults import RetryingSandbox, fault_reason
from guardrail_eval.pool import CORPUS_FILE, QUERIES_FILE, CorpusEntry, Pool, Query
from guardrail_eval.visible import visible_spec

__all__ = [
    "Contradiction",
    "PoolValidation",
    "Relabelling",
    "ValidationFault",
    "ValidationSummary",
    "validate_pool",
]

Role = Literal["canonical", "distractor", "unit"]
MetadataFor = Callable[[Query, CorpusEntry], Mapping[str, Any] | None]
"""The candidate metadata (module context) a snippet is judged with, as the eval judges it."""

_CHUNK = 64  # jobs per gate call: enough to keep the sandbox pool busy
_NAMED = 5  # contradictions an error message names before "and N more"
_TEST_CHARS = 80
_Action = Literal[
    "removed from the correct ids", "query dropped", "counted as correct", "unit dropped"
]
_ACTION: dict[Role, _Action] = {
    "canonical": "removed from the correct ids",
    "distractor": "counted as correct",
    "unit": "unit dropped",
}


class Contradiction(BaseModel, frozen=True):
    """A label that execution contradicts, with where it is written.

    ``file``/``line`` locate the corpus row (the snippet and its label), ``query_file``/
    ``query_line`` the query that pairs it; a line is None for a pool not loaded from files.
    ``unit`` is the visible unit a canonical fails on its own (role ``unit``).
    """

    query_id: str
    corpus_id: str
    role: Role
    unit: tuple[int, ...] | None = None
    file: str
    line: int | None
    query_file: str
    query_line: int | None
    status: str
    reason: str
    detail: str

    @property
    def location(self) -> str:
        return f"{self.file}:{self.line}" if self.line is not None else self.file

    def describe(self) -> str:
        """``corpus.jsonl:3: c_0002, paired distractor of q_0001 (queries.jsonl:1), passes...``"""
        query_at = PurePath(self.query_file).name
        if self.query_line is not None:
            query_at += f":{self.query_line}"
        role = {
            "canonical": "canonical",
            "distractor": "paired distractor",
            "unit": f"canonical (its visible unit of tests {list(self.unit or ())} alone)",
        }[self.role]
        return (
            f"{self.location}: {self.corpus_id}, {role} of {self.query_id} ({query_at}),"
            f" {self.detail}"
        )


class Relabelling(BaseModel, frozen=True):
    """One label changed by ``--relabel`` because execution contradicted it."""

    contradiction: Contradiction
    action: _Action

    def describe(self) -> str:
        return f"{self.contradiction.describe()}: {self.action}"


class ValidationFault(BaseModel, frozen=True):
    """A validation verdict still decided by the machine after the retries."""

    query_id: str
    corpus_id: str
    reason: str
    unit: tuple[int, ...] | None = Field(
        default=None, description="the visible unit the canonical ran alone (None: the suite)"
    )


class ValidationSummary(BaseModel):
    """What ``summary.json`` says about the pool's validation."""

    checked: int
    canonicals: int
    distractors: int
    units: int = Field(0, description="(canonical, visible unit) pairs run, each unit alone")
    retried: int
    relabelled: list[Relabelling]
    dropped_queries: list[str]
    faults: list[ValidationFault] = Field(
        default_factory=list, description="pairs whose labels could not be checked (faults)"
    )

    def describe(self) -> str:
        """One paragraph for the report."""
        text = (
            f"Pool validation: {self.canonicals} canonical(s) and {self.distractors} paired"
            f" distractor(s) ran against their query's full suite, and the canonicals on each"
            f" of their {self.units} visible unit(s) alone ({self.retried} re-run after a"
            " sandbox fault or starved timeout)"
        )
        if self.faults:
            text += f"; {len(self.faults)} could not be checked (sandbox faults, listed as such)"
        if not self.relabelled:
            agree = "every label checked agrees" if self.faults else "every label agrees"
            return f"{text}; {agree} with execution."
        changes = "; ".join(change.describe() for change in self.relabelled)
        return (
            f"{text}; {len(self.relabelled)} label(s) contradicted execution and were relabelled"
            f" (--relabel): {changes}."
        )


@dataclass
class PoolValidation:
    """Every validation verdict of a pool, and what they say about its labels.

    Attributes:
        pool: the pool as loaded.
        contradictions: labels execution contradicts, in query order (canonicals first).
        faults: verdicts still faults after the retries (neither confirming nor contradicting).
        canonicals, distractors, units: how many (query, snippet) pairs of each role ran.
        retried: jobs re-run after a fault.
    """

    pool: Pool
    contradictions: list[Contradiction] = field(default_factory=list)
    faults: list[ValidationFault] = field(default_factory=list)
    canonicals: int = 0
    distractors: int = 0
    units: int = 0
    retried: int = 0

    def settle(self, *, relabel: bool = False) -> tuple[Pool, ValidationSummary]:
        """The pool to evaluate and the summary of its validation (faults included).

        Raises:
            LabelError: labels contradict execution and ``relabel`` is off (exit 2).
        """
        if self.contradictions and not relabel:
            raise LabelError(
                f"{len(self.contradictions)} label(s) of pool {self.pool.name!r} contradict"
                f" execution: {_listed(self.contradictions)}"
            )
        pool, changes = _relabel(self.pool, self.contradictions)
        summary = ValidationSummary(
            checked=self.canonicals + self.distractors + self.units,
            canonicals=self.canonicals,
            distractors=self.distractors,
            units=self.units,
            retried=self.retried,
            relabelled=changes,
            faults=self.faults,
            dropped_queries=list(
                dict.fromkeys(
                    c.contradiction.query_id for c in changes if c.action == "query dropped"
                )
            ),
        )
        return pool, summary


def validate_pool(
    pool: Pool,
    gate: Gate,
    *,
    metadata: MetadataFor | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> PoolValidation:
    """Run every query's canonicals and paired distractors against its full suite, and its
    canonicals on each of its visible units alone (a unit that is the whole suite is not re-run).

    ``gate`` supplies the sandbox and the verdict cache; its jobs go through a
    `RetryingSandbox` (closed here, the gate's sandbox is not). ``metadata(query, entry)``
    gives a snippet's module context, as the eval's ground truth judges it.

    Raises:
        PoolFormatError, SpecError: a query's tests cannot make a spec.
        SandboxError: the sandbox cannot run at all.
    """
    pairs: list[tuple[Query, str, Role, tuple[int, ...] | None]] = []
    for query in pool.queries:
        pairs += [(query, cid, "canonical", None) for cid in query.correct_corpus_ids]
        pairs += [(query, cid, "distractor", None) for cid in query.paired_distractor_corpus_ids]
        whole = tuple(range(len(query.test_suite)))
        units = [unit for unit in query.units if unit != whole]
        pairs += [(query, cid, "unit", u) for u in units for cid in query.correct_corpus_ids]
    specs = {query.query_id: pool.spec(query) for query in pool.queries}
    retrying = RetryingSandbox.around(gate.sandbox)
    verdicts: list[Verdict] = []
    try:
        judge = Gate(retrying, cache=gate.cache if gate.cache is not None else False)
        for start in range(0, len(pairs), _CHUNK):
            chunk = pairs[start : start + _CHUNK]
            verdicts += judge.verify(
                [pool.corpus[cid].code for _, cid, _, _ in chunk],
                [
                    specs[query.query_id] if unit is None else visible_spec(pool, query, unit)
                    for query, _, _, unit in chunk
                ],
                metadata=[
                    metadata(query, pool.corpus[cid]) if metadata is not None else None
                    for query, cid, _, _ in chunk
                ],
            )
            if on_progress is not None:
                on_progress(len(verdicts), len(pairs))
    finally:
        retrying.close()
    validation = PoolValidation(pool, retried=retrying.retried)
    failing: set[tuple[str, str]] = set()  # canonicals failing the whole suite: no unit news
    for (query, cid, role, unit), verdict in zip(pairs, verdicts, strict=True):
        counted = {"canonical": "canonicals", "distractor": "distractors", "unit": "units"}[role]
        setattr(validation, counted, getattr(validation, counted) + 1)
        reason = fault_reason(verdict)
        if reason is not None:
            validation.faults.append(
                ValidationFault(query_id=query.query_id, corpus_id=cid, reason=reason, unit=unit)
            )
            continue
        detail = _contradiction(role, verdict)
        if detail is not None and role == "canonical":
            failing.add((query.query_id, cid))
        if detail is not None and not (role == "unit" and (query.query_id, cid) in failing):
            validation.contradictions.append(
                _located(pool, query, cid, role, verdict=verdict, detail=detail).model_copy(
                    update={"unit": unit}
                )
            )
    return validation


def _contradiction(role: Role, verdict: Verdict) -> str | None:
    """What is wrong with the label, or None when execution agrees with it."""
    total = len(verdict.tests)
    if role == "distractor":
        return f"passes all {total} of its query's tests" if verdict.verified else None
    if role == "unit" and not verdict.verified:
        return f"fails a visible draw of its query {_failure(verdict, total)}"
    if verdict.verified:
        return None
    return f"does not pass its own tests {_failure(verdict, total)}"


def _failure(verdict: Verdict, total: int) -> str:
    """How a canonical failed: its status and its first failing test."""
    first = next((test for test in verdict.tests if not test.passed), None)
    status = f"{verdict.status.value}/{verdict.reason.value}"
    if first is None:
        return f"({status}): {verdict.message or 'no test ran'}"
    test = first.test if len(first.test) <= _TEST_CHARS else first.test[: _TEST_CHARS - 3] + "..."
    failed = len(verdict.failed_tests)
    return f"({status}): {failed} of {total} failed, first {first.outcome} on {test!r}"


def _located(
    pool: Pool, query: Query, cid: str, role: Role, *, verdict: Verdict, detail: str
) -> Contradiction:
    path, line = pool.location(CORPUS_FILE, cid)
    query_path, query_line = pool.location(QUERIES_FILE, query.query_id)
    return Contradiction(
        query_id=query.query_id,
        corpus_id=cid,
        role=role,
        file=str(path),
        line=line,
        query_file=str(query_path),
        query_line=query_line,
        status=verdict.status.value,
        reason=verdict.reason.value,
        detail=detail,
    )


def _relabel(pool: Pool, contradictions: Sequence[Contradiction]) -> tuple[Pool, list[Relabelling]]:
    """The pool with the labels execution gives (see the module docstring), and the changes."""
    if not contradictions:
        return pool, []
    by_query: dict[str, list[Contradiction]] = {}
    for contradiction in contradictions:
        by_query.setdefault(contradiction.query_id, []).append(contradiction)
    corpus = dict(pool.corpus)
    queries: list[Query] = []
    changes: list[Relabelling] = []
    for query in pool.queries:
        found = by_query.get(query.query_id, [])
        failing = {c.corpus_id for c in found if c.role == "canonical"}
        passing = [c.corpus_id for c in found if c.role == "distractor"]
        canonicals = [cid for cid in query.correct_corpus_ids if cid not in failing]
        failed_units = {c.unit for c in found if c.role == "unit"}
        units = [list(u) for u in query.units if u not in failed_units]
        if not canonicals or not units:
            changes += [Relabelling(contradiction=c, action="query dropped") for c in found]
            continue
        changes += [Relabelling(contradiction=c, action=_ACTION[c.role]) for c in found]
        for cid in passing:
            corpus[cid] = corpus[cid].model_copy(update={"label": "correct", "bug_type": None})
        distractors = [c for c in query.paired_distractor_corpus_ids if c not in passing]
        update: dict[str, Any] = {
            "correct_corpus_ids": canonicals + passing,
            "paired_distractor_corpus_ids": distractors,
        }
        if failed_units:
            update["test_units"] = units
        queries.append(query.model_copy(update=update) if found else query)
    if not queries:
        raise LabelError(
            f"no query of pool {pool.name!r} is left after relabelling: every canonical fails"
            f" its own tests: {_listed(contradictions)}"
        )
    _check_one_label_each(corpus, queries)
    return pool.relabelled(corpus, queries), changes


def _check_one_label_each(corpus: Mapping[str, CorpusEntry], queries: Sequence[Query]) -> None:
    """A snippet relabelled correct for one query but still another's distractor has no label."""
    for query in queries:
        for cid in query.paired_distractor_corpus_ids:
            if corpus[cid].label == "correct":
                raise LabelError(
                    f"{cid} passes every test of a query that pairs it as a distractor, but is"
                    f" a paired distractor of {query.query_id} too: no one label fits both"
                )


def _listed(contradictions: Sequence[Contradiction]) -> str:
    shown = "; ".join(c.describe() for c in contradictions[:_NAMED])
    more = len(contradictions) - _NAMED
    return shown + (f"; and {more} more" if more > 0 else "")
