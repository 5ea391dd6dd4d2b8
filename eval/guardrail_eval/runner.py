"""The eval: replay the retrieve-then-verify flow over a pool whose ground truth is known.

For every retrieval system and query (`run_eval`):

1. retrieve the top ``max(fetch_k, max(ks))`` snippets (the ungated arm hands over the top
   ``max(ks)`` as they are);
2. gate the top ``fetch_k`` once per visible-test setting: the Gate verifies them against the
   first N tests (or all) and its policy orders what it hands over; the call is timed, and its
   sandbox runs and cache hits are counted (the gate cost an agent would pay);
3. judge every snippet retrieved against the query's **full** suite through the same sandbox and
   verdict cache: ``passes_all_tests`` (and so exec@k, precision@k and the agent view) is always
   decided by execution on all tests, hidden ones included. A snippet of another task almost
   always fails another task's tests, but it is run, never assumed.

An abstained query hands over nothing. Verdicts already obtained in this run for the same
snippet and spec are reused, so even a Gate without a verdict cache judges each pair once.

Every sandbox call goes through a `RetryingSandbox`: a verdict the machine decided (a sandbox
fault, a starved timeout) is re-run, and what is still a fault afterwards is listed by
`EvalRun.faults` so that the summary names it and the CLI exits 4 rather than publishing it as
"did not pass". The engine and the image are checked before any system indexes anything.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from guardrail.gate import Candidate, Gate, GatedCandidate, GateResult, Policy
from guardrail.sandbox.base import Sandbox
from guardrail.spec import Spec
from guardrail.verdict import Verdict
from guardrail_eval.errors import EvalSettingError
from guardrail_eval.faults import RetryingSandbox, fault_reason
from guardrail_eval.metrics import DEFAULT_KS, RankedQuery
from guardrail_eval.pool import Pool, Query
from guardrail_eval.poolcontext import candidate_metadata
from guardrail_eval.systems import Retrieval, RetrievalSystem

__all__ = [
    "Arm",
    "EvalProgress",
    "EvalRun",
    "EvalSettings",
    "FaultedVerdict",
    "GateCost",
    "JudgedItem",
    "QueryOutcome",
    "SystemRun",
    "check_sandbox",
    "parse_visible_tests",
    "run_eval",
    "visible_label",
]

EvalProgress = Callable[[str, int, int], None]
"""``hook(stage, done, total)``: the stage's description and how far it got."""

_TRUTH_CHUNK = 64  # ground-truth jobs per gate call: large enough to keep the pool busy


def parse_visible_tests(text: str) -> int | None:
    """``"all"`` -> None (the gate sees every test); ``"N"`` -> N (the first N tests).

    Raises:
        EvalSettingError: anything else, or N below 1.
    """
    value = text.strip().lower()
    if value == "all":
        return None
    if not value.isdigit() or int(value) < 1:
        raise EvalSettingError(
            f"--visible-tests must be 'all' or a whole number >= 1, not {text!r}",
            hint="for example --visible-tests 1 (the gate sees the first test only)",
        )
    return int(value)


def visible_label(visible: int | None) -> str:
    """``"all"`` or the number of visible tests, as in file names and reports."""
    return "all" if visible is None else str(visible)


@dataclass(frozen=True)
class EvalSettings:
    """How the gate is run and scored.

    Attributes:
        fetch_k: how many of the retriever's top snippets the gate verifies.
        policy: the Gate policy that orders what it hands over.
        visible_tests: one gated arm per entry; None = the gate sees all tests.
        ks: the metric cut-offs.
    """

    fetch_k: int = 10
    policy: Policy = Policy.RERANK
    visible_tests: tuple[int | None, ...] = (None,)
    ks: tuple[int, ...] = DEFAULT_KS

    def __post_init__(self) -> None:
        if self.fetch_k < 1:
            raise EvalSettingError(f"--fetch-k must be at least 1, not {self.fetch_k}")
        if not self.visible_tests:
            raise EvalSettingError("give at least one --visible-tests setting")
        labels = [visible_label(v) for v in self.visible_tests]
        if len(set(labels)) != len(labels):
            raise EvalSettingError(f"--visible-tests is repeated: {labels}")
        for visible in self.visible_tests:
            if visible is not None and visible < 1:
                raise EvalSettingError(f"--visible-tests must be at least 1, not {visible}")

    @property
    def depth(self) -> int:
        """How deep each system retrieves: enough for the gate and for every cut-off."""
        return max(self.fetch_k, *self.ks)


@dataclass(frozen=True, slots=True)
class JudgedItem:
    """One snippet handed over (or dropped), with what execution said about it.

    Attributes:
        corpus_id: the snippet's pool id.
        score: the retriever's score.
        retrieval_rank: 1-based rank in the retriever's ranking.
        truth: the verdict against the query's full test suite (the ground truth).
        gate_verdict: the gate's verdict against the visible tests (gated arms only).
    """

    corpus_id: str
    score: float
    retrieval_rank: int
    truth: Verdict
    gate_verdict: Verdict | None = None

    @property
    def passes_all_tests(self) -> bool:
        return self.truth.verified


@dataclass(frozen=True, slots=True)
class GateCost:
    """What gating one query cost: wall-clock latency, sandbox runs, verdict-cache hits."""

    latency_s: float
    sandbox_runs: int
    cache_hits: int


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """What one arm handed over for one query."""

    query: Query
    items: tuple[JudgedItem, ...]
    snippet_scores: dict[str, float] | None = None
    dropped: tuple[JudgedItem, ...] = ()
    cost: GateCost | None = None

    def ranked(self, pool: Pool) -> RankedQuery:
        """The handed-over ranking as metric input."""
        return RankedQuery(
            query_id=self.query.query_id,
            items=tuple(
                pool.ranked_item(
                    self.query,
                    item.corpus_id,
                    passes_all_tests=item.passes_all_tests,
                    score=item.score,
                )
                for item in self.items
            ),
            n_correct=len(self.query.correct_corpus_ids),
            snippet_scores=(
                pool.snippet_scores(self.query, self.snippet_scores)
                if self.snippet_scores is not None
                else None
            ),
        )


@dataclass
class Arm:
    """One system under one gate setting: ungated (``visible`` unused) or gated."""

    system: str
    gated: bool
    visible: int | None = None
    outcomes: list[QueryOutcome] = field(default_factory=list)

    @property
    def name(self) -> str:
        """``dense-minilm``, ``dense-minilm+gate``, ``dense-minilm+gate-visible1``."""
        if not self.gated:
            return self.system
        return f"{self.system}+gate" + ("" if self.visible is None else f"-visible{self.visible}")

    def ranked_queries(self, pool: Pool) -> list[RankedQuery]:
        return [outcome.ranked(pool) for outcome in self.outcomes]


@dataclass
class SystemRun:
    """A system's ungated arm and one gated arm per visible-test setting."""

    system: str
    ungated: Arm
    gated: list[Arm]


@dataclass
class EvalRun:
    """Everything an eval produced, ready for `guardrail_eval.summary` and the reports."""

    pool: Pool
    settings: EvalSettings
    systems: list[SystemRun]
    sandbox: str
    cache: str
    timings: dict[str, float] = field(default_factory=dict)
    verifications: int = 0
    sandbox_runs: int = 0
    retried: int = 0

    @property
    def arms(self) -> list[Arm]:
        return [arm for run in self.systems for arm in (run.ungated, *run.gated)]

    def faults(self) -> list[FaultedVerdict]:
        """Every verdict the numbers rest on that is still a fault after the retries.

        Ground truth and gate verdicts alike, each (query, snippet, judged by) once, in run order.
        """
        found: dict[FaultedVerdict, None] = {}
        for arm in self.arms:
            for outcome in arm.outcomes:
                for item in (*outcome.items, *outcome.dropped):
                    judged = [("ground truth", item.truth)]
                    if item.gate_verdict is not None:
                        judged.append((arm.name, item.gate_verdict))
                    for judged_by, verdict in judged:
                        reason = fault_reason(verdict)
                        if reason is not None:
                            query_id, corpus_id = outcome.query.query_id, item.corpus_id
                            found[FaultedVerdict(query_id, corpus_id, reason, judged_by)] = None
        return list(found)


@dataclass(frozen=True, slots=True)
class FaultedVerdict:
    """A verdict the machine decided (see `guardrail_eval.faults`), left after the retries.

    ``judged_by`` is ``ground truth`` (the full suite) or the name of the gated arm.
    """

    query_id: str
    corpus_id: str
    reason: str
    judged_by: str


def check_sandbox(sandbox: Sandbox) -> None:
    """Raise `SandboxError` now when the engine or the image is missing (a `DockerSandbox`).

    The `Sandbox` contract has no readiness check; a Docker sandbox does, and it takes about a
    second, where finding out at the first gated query costs the whole indexing first.
    """
    check = getattr(sandbox, "check_ready", None)
    if callable(check):
        check()


def run_eval(
    pool: Pool,
    systems: Sequence[RetrievalSystem],
    gate: Gate,
    settings: EvalSettings | None = None,
    *,
    on_progress: EvalProgress | None = None,
) -> EvalRun:
    """Run every system ungated and gated over ``pool``; see the module docstring.

    ``gate`` supplies the sandbox and the verdict cache; the policy comes from ``settings``.
    Everything that can be checked is checked before the first snippet is embedded or run.

    Raises:
        EvalSettingError: no systems, or two with the same name.
        PoolFormatError, SpecError: a query's tests cannot make a spec.
        SandboxError: the sandbox cannot run at all (checked before any system indexes).
    """
    settings = settings or EvalSettings()
    names = [system.name for system in systems]
    if not systems or len(set(names)) != len(names):
        raise EvalSettingError(f"give one or more retrieval systems with distinct names: {names}")
    specs = _Specs(pool, settings)
    work = [(system, system.queries(pool)) for system in systems]
    for _, queries in work:
        specs.check(queries)
    check_sandbox(gate.sandbox)
    loop = _Loop(specs, gate, on_progress or _no_progress)
    try:
        runs = [loop.run_system(system, queries) for system, queries in work]
    finally:
        loop.sandbox.close()
    return EvalRun(
        pool=pool,
        settings=settings,
        systems=runs,
        sandbox=loop.sandbox.identity,
        cache=gate.cache.path if gate.cache is not None else "off",
        timings=loop.timings,
        verifications=loop.judge.verdicts_seen,
        sandbox_runs=loop.sandbox.jobs,
        retried=loop.sandbox.retried,
    )


def _no_progress(stage: str, done: int, total: int) -> None:
    """The default progress hook: nothing to report to."""


class _Specs:
    """Every spec a run needs, built (and so checked) once."""

    def __init__(self, pool: Pool, settings: EvalSettings) -> None:
        self.pool = pool
        self.settings = settings
        self._specs: dict[tuple[str, int | None], Spec] = {}

    def check(self, queries: Sequence[Query]) -> None:
        for query in queries:
            for visible in (None, *self.settings.visible_tests):
                self.get(query, visible)

    def get(self, query: Query, visible: int | None) -> Spec:
        key = (query.query_id, visible)
        if key not in self._specs:
            self._specs[key] = self.pool.spec(query, visible_tests=visible)
        return self._specs[key]


class _Judge:
    """Ground truth: verdicts against the full suite, each (query, snippet) pair judged once."""

    def __init__(self, gate: Gate, specs: _Specs) -> None:
        self.gate = gate
        self.specs = specs
        self._truth: dict[tuple[str, str], Verdict] = {}
        self.verdicts_seen = 0

    def remember(self, query: Query, result: GateResult, spec: Spec) -> None:
        """Reuse the gate's verdicts as ground truth when it saw the full suite."""
        self.verdicts_seen += len(result.judged)
        if spec.sha256 != self.specs.get(query, None).sha256:
            return
        for item in result.judged:
            self._truth[(query.query_id, item.candidate.id)] = item.verdict

    def judge_all(
        self, pairs: Sequence[tuple[Query, str]], on_progress: Callable[[int, int], None]
    ) -> None:
        """Judge every pair not judged yet, in chunks that keep the sandbox pool busy."""
        todo: dict[tuple[str, str], Query] = {}
        for query, corpus_id in pairs:
            key = (query.query_id, corpus_id)
            if key not in self._truth:
                todo.setdefault(key, query)
        keys = list(todo)
        on_progress(0, len(keys))
        for start in range(0, len(keys), _TRUTH_CHUNK):
            chunk = keys[start : start + _TRUTH_CHUNK]
            pool = self.specs.pool
            entries = [pool.corpus[corpus_id] for _, corpus_id in chunk]
            specs = [self.specs.get(todo[key], None) for key in chunk]
            metadata = [candidate_metadata(pool, entry) for entry in entries]
            verdicts = self.gate.verify([e.code for e in entries], specs, metadata=metadata)
            self.verdicts_seen += len(verdicts)
            self._truth.update(zip(chunk, verdicts, strict=True))
            on_progress(start + len(chunk), len(keys))

    def truth(self, query: Query, corpus_id: str) -> Verdict:
        return self._truth[(query.query_id, corpus_id)]


class _Loop:
    """One eval's moving parts: specs, the retrying sandbox, the gate, the judge, the timings."""

    def __init__(self, specs: _Specs, gate: Gate, report: EvalProgress) -> None:
        self.specs = specs
        self.settings = specs.settings
        self.report = report
        self.sandbox = RetryingSandbox.around(gate.sandbox)
        cache = gate.cache if gate.cache is not None else False
        self.gate = Gate(self.sandbox, cache=cache, policy=self.settings.policy)
        self.judge = _Judge(Gate(self.sandbox, cache=cache), specs)
        self.timings: dict[str, float] = {}

    def run_system(self, system: RetrievalSystem, queries: Sequence[Query]) -> SystemRun:
        """Index, retrieve, gate each visible-test setting, judge: one system's arms."""
        pool, name = self.specs.pool, system.name
        with self._timed(f"{name}.index_s"):
            stage = f"{name}: indexing the corpus"
            system.prepare(pool, lambda done, total: self.report(stage, done, total))
        with self._timed(f"{name}.retrieve_s"):
            retrievals = []
            for done, query in enumerate(queries, start=1):
                retrievals.append(system.retrieve(pool, query, self.settings.depth))
                self.report(f"{name}: retrieving", done, len(queries))
        with self._timed(f"{name}.gate_s"):
            gated = [
                self._gated_arm(name, visible, queries, retrievals)
                for visible in self.settings.visible_tests
            ]
        with self._timed(f"{name}.ground_truth_s"):
            stage = f"{name}: judging against all tests"
            pairs = [
                (query, item.corpus_id)
                for query, retrieval in zip(queries, retrievals, strict=True)
                for item in retrieval.ranking
            ]
            self.judge.judge_all(pairs, lambda done, total: self.report(stage, done, total))
        top, truth = max(self.settings.ks), self.judge.truth
        ungated = Arm(system=name, gated=False)
        for query, retrieval in zip(queries, retrievals, strict=True):
            items = tuple(
                JudgedItem(item.corpus_id, item.score, rank, truth(query, item.corpus_id))
                for rank, item in enumerate(retrieval.ranking[:top], start=1)
            )
            ungated.outcomes.append(QueryOutcome(query, items, retrieval.snippet_scores))
        for arm, results in gated:
            arm.outcomes = [
                _gated_outcome(query, result, cost, self.judge)
                for query, (result, cost) in zip(queries, results, strict=True)
            ]
        return SystemRun(name, ungated, [arm for arm, _ in gated])

    def _gated_arm(
        self,
        name: str,
        visible: int | None,
        queries: Sequence[Query],
        retrievals: Sequence[Retrieval],
    ) -> tuple[Arm, list[tuple[GateResult, GateCost]]]:
        """Gate every query's top ``fetch_k`` against its visible tests, one timed call each."""
        stage = f"{name}: gating (visible tests: {visible_label(visible)})"
        results = []
        for done, (query, retrieval) in enumerate(zip(queries, retrievals, strict=True), 1):
            spec = self.specs.get(query, visible)
            result, cost = self._gate_one(query, retrieval, spec)
            self.judge.remember(query, result, spec)
            results.append((result, cost))
            self.report(stage, done, len(queries))
        return Arm(system=name, gated=True, visible=visible), results

    def _gate_one(
        self, query: Query, retrieval: Retrieval, spec: Spec
    ) -> tuple[GateResult, GateCost]:
        pool = self.specs.pool
        candidates = [
            Candidate(
                code=pool.corpus[item.corpus_id].code,
                id=item.corpus_id,
                score=item.score,
                metadata=candidate_metadata(pool, pool.corpus[item.corpus_id]),
            )
            for item in retrieval.ranking[: self.settings.fetch_k]
        ]
        runs_before = self.sandbox.jobs
        started = time.perf_counter()
        result = self.gate.gate(candidates, spec)
        latency = time.perf_counter() - started
        hits = sum(1 for item in result.judged if item.verdict.cached)
        return result, GateCost(latency, self.sandbox.jobs - runs_before, hits)

    @contextmanager
    def _timed(self, key: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[key] = time.perf_counter() - started


def _gated_outcome(query: Query, result: GateResult, cost: GateCost, judge: _Judge) -> QueryOutcome:
    """What the gate handed over (policy order) and what it dropped (retrieval order)."""

    def judged(item: GatedCandidate) -> JudgedItem:
        corpus_id = item.candidate.id
        return JudgedItem(
            corpus_id,
            float(item.candidate.score or 0.0),
            item.retrieval_rank + 1,
            judge.truth(query, corpus_id),
            item.verdict,
        )

    kept_ranks = {item.retrieval_rank for item in result.kept}
    return QueryOutcome(
        query,
        tuple(judged(item) for item in result.kept),
        dropped=tuple(judged(i) for i in result.judged if i.retrieval_rank not in kept_ranks),
        cost=cost,
    )
