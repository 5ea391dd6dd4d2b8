"""A pool of real code: a codebase's doctested functions as queries, the rest as its corpus.

`build_real_pool` turns one or more code trees into a release-format pool (``DIR/data/`` and the
source files of its module contexts in ``DIR/context/``, see `guardrail_eval.poolcontext`):

1. the trees' Python files are copied into the pool's context folder (`realtree.stage_tree`) and
   split as ``guardrail index`` splits them: every function and method is a snippet, and its
   doctest examples (`guardrail.index.doctests`) its tests; then every docstring's examples
   are removed from the copy and from every snippet's text (`guardrail_eval.stripping`): the
   hidden tests are in ``queries.jsonl`` only, never readable from a candidate or its module;
2. each function with doctest tests and a docstring summary line is a candidate query; its
   canonical (the function as indexed) is judged by the Gate inside its module, in the copy,
   against its own doctests: only a verified one becomes a query (the summary line is the query,
   the examples its ``test_suite``, the docstring's imports its ``test_setup``); its visible
   units (`guardrail_eval.units`) are judged the same way, each on its own, and only those the
   canonical passes are kept as its ``test_units`` (a query with none left is excluded);
3. single-line mutants of each query's canonical (`guardrail_eval.mutations`) are judged in
   the same module context: those that pass at least one example and fail another are its
   paired distractors (a query needs ``min_distractors`` of them);
4. every indexed function is in the corpus, unchanged: a query's canonical is ``correct``, any
   other is ``incorrect`` with bug type ``natural`` (a real near-clone or unrelated function of
   the codebase; whether it passes a query's tests is decided by running it, as for any entry);
5. every entry lives in a code tree of its own (`guardrail_eval.contexttrees`): the canonicals
   and natural functions in the codebase as copied, each mutant in a fork of it whose module has
   the mutant in place of its function, so every entry's text is the definition in the module it
   ships in and "the text found in its module" tells no canonical from its mutants. The trees
   are stored content-addressed in ``context/`` (a fork costs its one changed module).

Corpus ids are opaque (`opaque_id`: ``r_`` and 16 hex digits of a hash of the seed and the
function's key ``module:qualified_name``, a mutant's of its text too), and the corpus and each
query's paired distractors are in id order: neither an id's shape nor its order tells a canonical
from its mutants or a natural function (``distractor_metadata.jsonl`` and the labels say which
is which; what a retriever is handed never does). A query's id is ``q:`` and its function's key.
The same trees and seed give
byte-identical ``corpus.jsonl``, ``queries.jsonl``, ``distractor_metadata.jsonl`` and
``context/`` (``build_report.json`` holds timings and provenance). Faults are re-run as in every
build (`guardrail_eval.faults`); a pool with faults left is written with ``clean: false``.
"""

from __future__ import annotations

import hashlib
import shutil
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from guardrail.gate import Gate
from guardrail.precheck import size_problem
from guardrail.sandbox.shipping import RUNNER_VERSION
from guardrail.spec import Spec, spec_size_problem
from guardrail.substitution import SubstitutionError, substitute
from guardrail.verdict import Verdict
from guardrail_eval.build import (
    BUILDER_VERSION,
    DEFAULT_SEED,
    BuildReport,
    ExcludedTask,
    PoolBuildError,
    task_faults,
    with_shortcuts,
    write_built_pool,
)
from guardrail_eval.contexttrees import TreeStore
from guardrail_eval.faults import RetryingSandbox, fault_reason
from guardrail_eval.manifest import MANIFEST_FILE, base_inputs, tree_digest, write_manifest
from guardrail_eval.mutations import Mutant, mutate_tasks
from guardrail_eval.pool import CorpusEntry, Pool, Query, check_pool
from guardrail_eval.poolcontext import CONTEXT_DIR, CorpusContext
from guardrail_eval.pools import TaskSource
from guardrail_eval.realtree import IndexedFunction, indexed_functions, stage_tree
from guardrail_eval.shortcuts import LEAK_MARGIN, construction_leaks
from guardrail_eval.stripping import stripped_functions
from guardrail_eval.units import suite_units

__all__ = ["GENERATOR", "NATURAL", "build_real_pool", "opaque_id", "summary_line"]

GENERATOR = "guardrail-eval real-code builder"
NATURAL = "natural"
"""The bug type of a corpus function that no query has as canonical (it is not a mutant)."""

_CHUNK = 64  # canonicals per gate call
_MAX_QUERY_CHARS = 300


def opaque_id(seed: int, key: str, code: str = "") -> str:
    """A corpus id that says nothing of what the entry is: a salted hash of its key (and, for a
    mutant, its ``code``); stable for the same seed, key and text."""
    digest = hashlib.sha256(f"{seed}\0{key}\0{code}".encode()).hexdigest()
    return f"r_{digest[:16]}"


def summary_line(docstring: str) -> str | None:
    """The docstring's first line, when it is prose (not a doctest example); capped."""
    first = next((line.strip() for line in docstring.splitlines() if line.strip()), "")
    if not first or first.startswith(">>>"):
        return None
    return first if len(first) <= _MAX_QUERY_CHARS else first[: _MAX_QUERY_CHARS - 3] + "..."


def build_real_pool(
    sources: Sequence[Path],
    gate: Gate,
    out_dir: Path,
    *,
    seed: int = DEFAULT_SEED,
    max_distractors: int = 4,
    min_distractors: int = 1,
    notes: Sequence[str] = (),
    inputs: Mapping[str, str] | None = None,
    on_task: Callable[[int, int], None] | None = None,
) -> tuple[Pool, BuildReport]:
    """Build the pool of ``sources`` (code trees) and write it to ``out_dir``; see the module.

    ``notes`` go into the build report (where the trees came from); ``inputs`` (each pinned
    sdist's sha256, say) into the manifest (`guardrail_eval.manifest`) with the build's own.
    ``out_dir/context`` and ``out_dir/data`` are replaced only once the build is done; on an
    error nothing is changed.

    Raises:
        PoolBuildError: a source is not a folder, ``out_dir`` is inside one, or no query is left.
        SandboxError: the sandbox cannot run at all.
    """
    started = time.perf_counter()
    out = out_dir.resolve()
    for source in sources:
        if out == source.resolve() or source.resolve() in out.parents:
            raise PoolBuildError(f"--out {out_dir} is inside the source tree {source}")
    out.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".build-", dir=out))
    try:
        context = staging / "codebase"  # judged in during the build; shipped as trees
        staged = stage_tree(sources, context)
        sources_digest = tree_digest({name: (context / name).read_bytes() for name in staged.files})
        functions = stripped_functions(context, indexed_functions(context))
        retrying = RetryingSandbox.around(gate.sandbox)
        store = TreeStore(staging / CONTEXT_DIR)
        try:
            own = Gate(retrying, cache=gate.cache if gate.cache is not None else False)
            built = _Builder(functions, context, out.name, seed, max_distractors, min_distractors)
            pool, report = built.run(own, on_task, _Trees(store, context, staged.files))
        finally:
            retrying.close()
        faults = task_faults(built.tasks, retrying)
        report = report.model_copy(
            update={
                "runner_version": RUNNER_VERSION,
                "image_id": getattr(gate.sandbox, "image_id", None),
                "clean": not faults,
                "retried": retrying.retried,
                "faults": faults,
                "notes": [*notes, *built.counts(pool), *staged.notes],
                "duration_s": round(time.perf_counter() - started, 3),
            }
        )
        report = with_shortcuts(report, pool, staging)
        leaks = construction_leaks(report.shortcuts) if report.shortcuts else []
        if leaks:
            raise PoolBuildError(
                "the pool gives its answer away: over the families, "
                + "; ".join(leaks)
                + f" (more than {LEAK_MARGIN:.0%} above chance); nothing was written"
            )
        (out / "data" / MANIFEST_FILE).unlink(missing_ok=True)  # never beside other files
        _replace_dir(store.context_dir, out / CONTEXT_DIR)
        write_built_pool(pool, report, out)
        settings = {
            "max_distractors": str(max_distractors),
            "min_distractors": str(min_distractors),
        }
        extra = {"sources": sources_digest, **settings, **(inputs or {})}
        write_manifest(out, base_inputs(seed, report.image_id, extra), clean=bool(report.clean))
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return pool, report


class _Builder:
    """Steps 2-4 of the module docstring over the staged functions."""

    def __init__(  # noqa: PLR0917 - build_real_pool's settings, passed on once
        self,
        functions: list[IndexedFunction],
        root: Path,
        name: str,
        seed: int,
        max_distractors: int,
        min_distractors: int,
    ) -> None:
        self.functions = functions
        self.root = root
        self.name = name
        self.seed = seed
        self.max_distractors = max_distractors
        self.min_distractors = min_distractors
        self.excluded: list[ExcludedTask] = []
        self.tasks = self._tasks()
        self.units: dict[str, list[list[int]]] = {}

    def run(
        self, gate: Gate, on_task: Callable[[int, int], None] | None, trees: _Trees
    ) -> tuple[Pool, BuildReport]:
        verified = self._verified(gate)
        self.units = self._passing_units(gate, verified)
        verified = [task for task in verified if self.units[task.id]]
        mutants, mutation = mutate_tasks(
            verified,
            gate,
            seed=self.seed,
            max_distractors=self.max_distractors,
            on_task=on_task,
        )
        kept: dict[str, list[Mutant]] = {}
        for task in verified:
            found = mutants[task.id]
            if len(found) < self.min_distractors:
                reason = f"{len(found)} valid mutant(s), fewer than {self.min_distractors}"
                if len(task.tests) == 1:
                    reason += " (with one example no mutant can pass one and fail another)"
                self.excluded.append(ExcludedTask(task_id=task.id, reason=reason))
            else:
                kept[task.id] = found
        if not kept:
            raise PoolBuildError(
                f"no query is left of {len(self.functions)} functions"
                f" ({len(self.tasks)} with doctests): {self._why_none()}"
            )
        pool = self._assemble(kept, trees)
        report = BuildReport(
            name=self.name,
            seed=self.seed,
            sandbox=gate.sandbox.identity,
            tasks=len(self.tasks),
            queries=len(pool.queries),
            corpus=len(pool.corpus),
            excluded=self.excluded,
            mutation=mutation,
            duration_s=0.0,
        )
        return pool, report

    def counts(self, pool: Pool) -> list[str]:
        """The pool's shape in words, for the build report."""
        mutants = sum(len(q.paired_distractor_corpus_ids) for q in pool.queries)
        natural = len(self.functions) - len(pool.queries)
        return [
            f"{len(self.functions)} functions indexed, {len(self.tasks)} with doctest tests;"
            f" {len(pool.queries)} queries; corpus {len(pool.corpus)}: {len(pool.queries)}"
            f" canonicals, {natural} natural functions, {mutants} mutants"
        ]

    def _tasks(self) -> list[TaskSource]:
        """A task per function with doctest tests, a summary line and a usable size."""
        tasks = []
        for function in self.functions:
            snippet = function.snippet
            if not snippet.tests:
                continue
            query = summary_line(snippet.docstring)
            too_large = size_problem(snippet.code) or spec_size_problem(
                snippet.tests, snippet.setup
            )
            problem = "no summary line in its docstring" if query is None else too_large
            if problem is None:
                try:
                    tasks.append(self._task(function, query or ""))
                    continue
                except ValidationError as exc:
                    problem = f"not a task: {exc.errors()[0]['msg']}"
            self.excluded.append(ExcludedTask(task_id=function.key, reason=problem))
        return tasks

    def _task(self, function: IndexedFunction, query: str) -> TaskSource:
        snippet = function.snippet
        top = function.context.module.split(".")[0].lower()
        return TaskSource(
            id=function.key,
            domain=top if top.isidentifier() and top.isascii() else "realcode",
            query=query,
            entry_point=snippet.entry_point,
            code=snippet.code,
            tests=tuple(snippet.tests),
            setup=snippet.setup,
            metadata=function.metadata(self.root),
        )

    def _verified(self, gate: Gate) -> list[TaskSource]:
        """The tasks whose canonical verifies against its own doctests in its module."""
        verified = []
        for start in range(0, len(self.tasks), _CHUNK):
            chunk = self.tasks[start : start + _CHUNK]
            verdicts = gate.verify(
                [task.code for task in chunk],
                [task.spec for task in chunk],
                metadata=[task.metadata for task in chunk],
            )
            for task, verdict in zip(chunk, verdicts, strict=True):
                if verdict.verified:
                    verified.append(task)
                else:
                    reason = f"canonical does not verify in its module: {_verdict_words(verdict)}"
                    self.excluded.append(ExcludedTask(task_id=task.id, reason=reason))
        return verified

    def _passing_units(self, gate: Gate, verified: list[TaskSource]) -> dict[str, list[list[int]]]:
        """Each verified task's units that its canonical passes on their own."""
        jobs = [(task, unit) for task in verified for unit in suite_units(task.tests)]
        passing: dict[str, list[list[int]]] = {task.id: [] for task in verified}
        for start in range(0, len(jobs), _CHUNK):
            chunk = jobs[start : start + _CHUNK]
            verdicts = gate.verify(
                [task.code for task, _ in chunk],
                [
                    Spec.build([task.tests[i] for i in unit], task.entry_point, task.setup)
                    for task, unit in chunk
                ],
                metadata=[task.metadata for task, _ in chunk],
            )
            for (task, unit), verdict in zip(chunk, verdicts, strict=True):
                if verdict.verified:
                    passing[task.id].append(list(unit))
        for task in verified:
            if not passing[task.id]:
                reason = "canonical passes none of its visible units on their own"
                self.excluded.append(ExcludedTask(task_id=task.id, reason=reason))
        return passing

    def _why_none(self) -> str:
        reasons = sorted({task.reason for task in self.excluded})
        return "; ".join(reasons[:3]) or "no function has doctest examples that call it"

    def _assemble(self, kept: dict[str, list[Mutant]], trees: _Trees) -> Pool:
        corpus: dict[str, CorpusEntry] = {}
        queries: list[Query] = []
        rows: list[dict[str, Any]] = []
        tasks = {task.id: task for task in self.tasks}

        def add(key: str, entry: dict[str, Any], code: str = "") -> str:
            corpus_id = opaque_id(self.seed, key, code)
            if corpus_id in corpus:
                raise PoolBuildError(f"two corpus entries hash to {corpus_id}: change --seed")
            corpus[corpus_id] = CorpusEntry(corpus_id=corpus_id, **entry)
            return corpus_id

        for function in self.functions:
            key, context = function.key, function.context
            if size_problem(function.snippet.code) is not None:
                continue  # over the sandbox's limit: it could never be judged
            canonical = key in kept
            canonical_id = add(
                key,
                {
                    "code": function.snippet.code,
                    "label": "correct" if canonical else "incorrect",
                    "bug_type": None if canonical else NATURAL,
                    "source_entry_id": context.module,
                    "context": trees.codebase(context),
                },
            )
            if not canonical:
                continue
            query_id = f"q:{key}"
            distractors: list[str] = []
            for mutant in kept[key]:
                corpus_id = add(
                    key,
                    {
                        "code": mutant.code,
                        "label": "incorrect",
                        "bug_type": mutant.bug_type.value,
                        "source_entry_id": context.module,
                        "context": trees.fork(context, mutant.code),
                    },
                    mutant.code,
                )
                distractors.append(corpus_id)
                rows.append(
                    {
                        "corpus_id": corpus_id,
                        "query_id": query_id,
                        "canonical_corpus_id": canonical_id,
                        "task_id": key,
                        "bug_type": mutant.bug_type.value,
                        "edit": mutant.description,
                        "test_results": list(mutant.outcomes),
                    }
                )
            task = tasks[key]
            queries.append(
                Query(
                    query_id=query_id,
                    query=task.query,
                    test_suite=list(task.tests),
                    correct_corpus_ids=[canonical_id],
                    paired_distractor_corpus_ids=sorted(distractors),
                    entry_id=context.module,
                    metadata={
                        "generator": GENERATOR,
                        "builder_version": BUILDER_VERSION,
                        "seed": self.seed,
                        **context.model_dump(exclude={"tree"}),
                    },
                    entry_point=task.entry_point,
                    test_setup=task.setup,
                    test_units=self.units[key],
                )
            )
        ordered = {cid: corpus[cid] for cid in sorted(corpus)}
        rows.sort(key=lambda row: (row["query_id"], row["corpus_id"]))
        pool = Pool(name=self.name, corpus=ordered, queries=queries, distractor_metadata=rows)
        check_pool(pool)
        return pool


class _Trees:
    """Step 5: the codebase's tree and each mutant's fork, stored in ``store``."""

    def __init__(self, store: TreeStore, codebase: Path, files: Sequence[str]) -> None:
        self.store = store
        self.files = {name: (codebase / name).read_bytes() for name in files}
        self.codebase_id = store.add(self.files)

    def codebase(self, context: CorpusContext) -> CorpusContext:
        """``context`` in the codebase as copied."""
        return context.model_copy(update={"tree": self.codebase_id})

    def fork(self, context: CorpusContext, code: str) -> CorpusContext:
        """``context`` in a fork of the codebase whose module has ``code`` for its function.

        Raises:
            PoolBuildError: the text cannot be placed (it was judged there, so never expected).
        """
        module = self.files[context.file].decode("utf-8")
        try:
            placed = substitute(module, code, context.qualified_name)
        except SubstitutionError as exc:
            raise PoolBuildError(f"{context.file}: a mutant cannot be placed: {exc}") from None
        files = {**self.files, context.file: placed.source.encode("utf-8")}
        return context.model_copy(update={"tree": self.store.add(files)})


def _verdict_words(verdict: Verdict) -> str:
    words = f"{verdict.status.value}/{verdict.reason.value}"
    fault = fault_reason(verdict)
    return f"{words} ({fault}, after the retries)" if fault else words


def _replace_dir(new: Path, target: Path) -> None:
    """Put the folder ``new`` at ``target``, the old one (if any) removed only after the move."""
    old = target.with_name(f".old-{target.name}")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        target.rename(old)
    new.rename(target)
    shutil.rmtree(old, ignore_errors=True)
