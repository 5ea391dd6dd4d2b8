"""Build a pool in the release format from task sources: verify, mutate, number, write.

`build_pool` is the one implementation; `build_builtin_pool` runs it over the hand-written tasks
and writes ``pools/builtin/data/`` (``guardrail_eval.humaneval.build_humaneval_pool`` does the
same for HumanEval). The result follows ``../shared/execretrieval.md``: corpus ids ``c_0001``...
(each task's canonical, then its distractors), query ids ``q_0001``..., canonicals labelled
``correct`` without a ``bug_type``, distractors ``incorrect`` with one; each query carries the
extra fields ``entry_point`` and ``test_setup``. ``distractor_metadata.jsonl`` records, per
distractor, its task, its canonical and the edit that made it.

Built pools must not depend on the machine's load: every sandbox call goes through a
`RetryingSandbox` (faults re-run, starved timeouts re-run with a longer limit and judged in CPU
terms), and a build that still had a fault afterwards is marked ``clean: false`` in its
``build_report.json`` with the faults named: such a pool is never reused from a cache, and the
built-in pool is not written at all (`IncompleteError`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from guardrail.errors import InputError
from guardrail.gate import Gate
from guardrail.sandbox.shipping import RUNNER_VERSION
from guardrail.verdict import Verdict
from guardrail_eval.errors import EvalError, IncompleteError
from guardrail_eval.faults import RETRIES, RetryingSandbox, fault_reason
from guardrail_eval.mutations import Mutant, MutationReport, mutate_tasks
from guardrail_eval.outputs import write_text_atomically
from guardrail_eval.pool import (
    CorpusEntry,
    Pool,
    Query,
    check_pool,
    write_pool,
)
from guardrail_eval.poolcontext import CONTEXT_DIR, CorpusContext, shipped_module_text
from guardrail_eval.pools import TaskSource
from guardrail_eval.shortcuts import ShortcutBaselines, family_baselines

__all__ = [
    "BUILDER_VERSION",
    "DEFAULT_SEED",
    "GENERATOR",
    "REPORT_FILE",
    "BuildFault",
    "BuildReport",
    "ExcludedTask",
    "PoolBuildError",
    "build_builtin_pool",
    "build_pool",
    "describe_faults",
    "read_build_report",
    "task_faults",
    "with_shortcuts",
    "write_built_pool",
]

GENERATOR = "guardrail-eval mutation builder"
# Bump whenever a change to the mutation rules or the builder can change a built pool: cached
# pools (HumanEval) are keyed by it.
BUILDER_VERSION = "1"
DEFAULT_SEED = 0
REPORT_FILE = "build_report.json"


class PoolBuildError(EvalError, InputError):
    """The task sources cannot make a pool.

    A canonical fails its own tests (every such task id is named), or no task is left. The task
    sources are the bad input, so the CLI exits with code 2.
    """

    hint = "fix the named tasks' code or tests; every canonical must pass all of its tests"


class ExcludedTask(BaseModel):
    """A task left out of a pool, and why (nothing is left out silently)."""

    task_id: str
    reason: str


class BuildFault(BaseModel):
    """A verdict of the build still decided by the machine after the retries."""

    task_id: str
    candidate: str = Field(description="'canonical' or 'mutant'")
    reason: str = Field(description="sandbox_fault or starved_timeout")


class BuildReport(BaseModel):
    """What a build did: tasks in and out, the mutation report, where the time went, provenance.

    ``clean`` is None in reports written before it was recorded; such a pool, like one with
    ``clean: false``, is never reused from a cache.
    """

    name: str
    seed: int
    builder_version: str = BUILDER_VERSION
    sandbox: str = Field(description="the sandbox identity the verdicts came from")
    runner_version: str | None = None
    image_id: str | None = None
    clean: bool | None = Field(
        default=None, description="True when no sandbox fault was left after the retries"
    )
    retried: int = Field(default=0, description="jobs re-run after a fault or starved timeout")
    faults: list[BuildFault] = Field(default_factory=list)
    tasks: int = Field(description="task sources given")
    queries: int
    corpus: int
    excluded: list[ExcludedTask] = Field(default_factory=list)
    notes: list[str] = Field(default_factory=list, description="source-specific remarks")
    mutation: MutationReport
    duration_s: float
    shortcuts: ShortcutBaselines | None = Field(
        default=None,
        description="pickers that run nothing, over each query's family (`.shortcuts`)",
    )

    def render_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def build_pool(
    tasks: Sequence[TaskSource],
    gate: Gate,
    *,
    seed: int = DEFAULT_SEED,
    name: str = "builtin",
    max_distractors: int = 4,
    min_distractors: int = 1,
    strict: bool = True,
    retries: int = RETRIES,
    on_task: Callable[[int, int], None] | None = None,
) -> tuple[Pool, BuildReport]:
    """Turn task sources into a pool of canonicals and verified single-line distractors.

    Every canonical is verified first, in one ``gate.verify`` call. With ``strict`` (the
    built-in pool) a canonical that does not pass all its tests is a `PoolBuildError` naming
    every such task; otherwise (HumanEval) the task is excluded and the report says why. Tasks
    with fewer than ``min_distractors`` valid distractors are excluded (and reported) too.
    Faulted jobs are re-run up to ``retries`` times (see `guardrail_eval.faults`); the report's
    ``clean`` says whether any fault was left. ``on_task(done, total)`` is called after each
    task's mutants are settled.

    Raises:
        PoolBuildError: ``strict`` and a canonical does not verify; or no task is left.
        IncompleteError: ``strict`` and a canonical's verdict is still a fault.
        SandboxError: the sandbox cannot run at all.
    """
    retrying = RetryingSandbox.around(gate.sandbox, retries=retries)
    try:
        own_gate = Gate(retrying, cache=gate.cache if gate.cache is not None else False)
        pool, report = _build(
            tasks, own_gate, seed, name, max_distractors, min_distractors, strict, on_task
        )
    finally:
        retrying.close()
    faults = task_faults(tasks, retrying)
    provenance = {
        "runner_version": RUNNER_VERSION,
        "image_id": getattr(gate.sandbox, "image_id", None),
        "clean": not faults,
        "retried": retrying.retried,
        "faults": faults,
    }
    return pool, report.model_copy(update=provenance)


def _build(  # noqa: PLR0917 - build_pool's own arguments, passed on once
    tasks: Sequence[TaskSource],
    gate: Gate,
    seed: int,
    name: str,
    max_distractors: int,
    min_distractors: int,
    strict: bool,
    on_task: Callable[[int, int], None] | None,
) -> tuple[Pool, BuildReport]:
    started = time.perf_counter()
    excluded: list[ExcludedTask] = []
    verdicts = gate.verify([task.code for task in tasks], [task.spec for task in tasks])
    faulted = [(task, v) for task, v in zip(tasks, verdicts, strict=True) if fault_reason(v)]
    if faulted and strict:
        named = "; ".join(f"{task.id}: {fault_reason(verdict)}" for task, verdict in faulted)
        raise IncompleteError(
            f"{len(faulted)} canonical(s) could not be judged, the sandbox failed: {named}"
        )
    failing = [(task, v) for task, v in zip(tasks, verdicts, strict=True) if not v.verified]
    if failing and strict:
        named = "; ".join(f"{task.id}: {_why(verdict)}" for task, verdict in failing)
        raise PoolBuildError(f"{len(failing)} canonical(s) fail their own tests: {named}")
    excluded += [ExcludedTask(task_id=t.id, reason=f"canonical {_why(v)}") for t, v in failing]
    verified = [task for task, verdict in zip(tasks, verdicts, strict=True) if verdict.verified]
    mutants, mutation_report = mutate_tasks(
        verified, gate, seed=seed, max_distractors=max_distractors, on_task=on_task
    )
    kept: list[tuple[TaskSource, list[Mutant]]] = []
    for task in verified:
        found = mutants[task.id]
        if len(found) < min_distractors:
            reason = f"{len(found)} valid distractor(s), fewer than the {min_distractors} required"
            if len(task.tests) == 1:
                reason += " (with a single test no mutant can pass one test and fail another)"
            excluded.append(ExcludedTask(task_id=task.id, reason=reason))
        else:
            kept.append((task, found))
    if not kept:
        raise PoolBuildError(f"no task of {len(tasks)} is left for pool {name!r}")
    pool = _assemble(kept, name=name, seed=seed)
    report = BuildReport(
        name=name,
        seed=seed,
        sandbox=gate.sandbox.identity,
        tasks=len(tasks),
        queries=len(pool.queries),
        corpus=len(pool.corpus),
        excluded=excluded,
        mutation=mutation_report,
        duration_s=round(time.perf_counter() - started, 3),
    )
    return pool, report


def task_faults(tasks: Sequence[TaskSource], retrying: RetryingSandbox) -> list[BuildFault]:
    """The build's faults left after the retries, by task (a job's spec names its task)."""
    by_spec = {task.spec.sha256: task for task in tasks}
    faults: dict[tuple[str, str, str], None] = {}
    for left in retrying.unsettled:
        task = by_spec[left.job.spec.sha256]
        candidate = "canonical" if left.job.code == task.code else "mutant"
        faults[(task.id, candidate, left.reason)] = None
    return [BuildFault(task_id=t, candidate=c, reason=r) for t, c, r in faults]


def write_built_pool(pool: Pool, report: BuildReport, out_dir: Path) -> Path:
    """Write the pool under ``out_dir/data/`` (atomically) with ``build_report.json``; return it.

    A report without shortcut baselines gets them first (`with_shortcuts`).
    """
    if report.shortcuts is None:
        report = with_shortcuts(report, pool, out_dir)
    folder = write_pool(pool, out_dir)
    write_text_atomically({folder / REPORT_FILE: report.render_json()})
    return folder


def with_shortcuts(report: BuildReport, pool: Pool, out_dir: Path) -> BuildReport:
    """``report`` with the shortcut baselines over each query's family, the module text read
    from ``out_dir/context/`` (written before this, for a pool of real code)."""
    texts: dict[CorpusContext, str | None] = {}

    def module_text(corpus_id: str) -> str | None:
        context = pool.corpus[corpus_id].context
        if context is not None and context not in texts:
            texts[context] = shipped_module_text(out_dir / CONTEXT_DIR, context)
        return None if context is None else texts[context]

    return report.model_copy(update={"shortcuts": family_baselines(pool, module_text)})


def read_build_report(pool: Pool) -> BuildReport | None:
    """The ``build_report.json`` next to a loaded pool's files, if it has one that parses."""
    if pool.source is None or not (pool.source / REPORT_FILE).is_file():
        return None
    try:
        return BuildReport.model_validate_json((pool.source / REPORT_FILE).read_text())
    except ValueError:
        return None  # not one of ours (a hand-made pool): nothing to say about its build


def describe_faults(report: BuildReport, most: int = 3) -> str:
    """``N fault(s) left: task (candidate, reason); ...`` naming the first ``most``."""
    named = "; ".join(f"{f.task_id} ({f.candidate}, {f.reason})" for f in report.faults[:most])
    more = f"; and {len(report.faults) - most} more" if len(report.faults) > most else ""
    return f"{len(report.faults)} sandbox fault(s) left after the retries: {named}{more}"


def build_builtin_pool(
    gate: Gate,
    out_dir: Path | None = None,
    seed: int = DEFAULT_SEED,
    *,
    on_task: Callable[[int, int], None] | None = None,
) -> tuple[Pool, BuildReport]:
    """Build the built-in pool from ``pools/builtin/tasks`` and write it.

    ``out_dir`` defaults to the package's ``pools/builtin`` folder, so the files land in
    ``pools/builtin/data/`` where `guardrail eval` reads them. Strict: every canonical must verify.

    Raises:
        PoolBuildError: see `build_pool`.
        IncompleteError: a fault was left after the retries; nothing is written (the shipped
            pool must be the one an idle machine builds).
    """
    from guardrail_eval.pools.builtin import DATA_DIR, load_task_sources

    pool, report = build_pool(
        load_task_sources(), gate, seed=seed, name="builtin", strict=True, on_task=on_task
    )
    if not report.clean:
        raise IncompleteError(f"the built-in pool was not written: {describe_faults(report)}")
    write_built_pool(pool, report, out_dir if out_dir is not None else DATA_DIR.parent)
    return pool, report


def _why(verdict: Verdict) -> str:
    first = next((t for t in verdict.tests if not t.passed), None)
    status = f"does not verify ({verdict.status.value})"
    if first is None:
        return f"{status}: {verdict.message or verdict.reason.value}"
    test = first.test if len(first.test) <= 80 else first.test[:77] + "..."
    return f"{status}: {first.outcome} on {test!r}"


def _assemble(kept: Sequence[tuple[TaskSource, list[Mutant]]], *, name: str, seed: int) -> Pool:
    corpus: dict[str, CorpusEntry] = {}
    queries: list[Query] = []
    metadata_rows: list[dict[str, Any]] = []
    per_domain: dict[str, int] = {}
    for number, (task, mutants) in enumerate(kept, start=1):
        per_domain[task.domain] = per_domain.get(task.domain, 0) + 1
        entry_id = f"exec_{task.domain}_{per_domain[task.domain]}"
        canonical_id = f"c_{len(corpus) + 1:04d}"
        corpus[canonical_id] = CorpusEntry(
            corpus_id=canonical_id, code=task.code, label="correct", source_entry_id=entry_id
        )
        query_id = f"q_{number:04d}"
        distractor_ids: list[str] = []
        for mutant in mutants:
            corpus_id = f"c_{len(corpus) + 1:04d}"
            corpus[corpus_id] = CorpusEntry(
                corpus_id=corpus_id,
                code=mutant.code,
                label="incorrect",
                bug_type=mutant.bug_type.value,
                source_entry_id=entry_id,
            )
            distractor_ids.append(corpus_id)
            metadata_rows.append(
                {
                    "corpus_id": corpus_id,
                    "query_id": query_id,
                    "canonical_corpus_id": canonical_id,
                    "task_id": task.id,
                    "bug_type": mutant.bug_type.value,
                    "edit": mutant.description,
                    "test_results": list(mutant.outcomes),
                }
            )
        queries.append(
            Query(
                query_id=query_id,
                query=task.query,
                test_suite=list(task.tests),
                correct_corpus_ids=[canonical_id],
                paired_distractor_corpus_ids=distractor_ids,
                entry_id=entry_id,
                metadata={
                    "generator": GENERATOR,
                    "builder_version": BUILDER_VERSION,
                    "seed": seed,
                    "task_id": task.id,
                },
                entry_point=task.entry_point,
                test_setup=task.setup,
            )
        )
    pool = Pool(name=name, corpus=corpus, queries=queries, distractor_metadata=metadata_rows)
    check_pool(pool)
    return pool
