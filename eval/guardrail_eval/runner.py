"""The eval: replay the retrieve-then-verify flow over a pool whose ground truth is known.

For every retrieval system and query (`run_eval`):

1. retrieve the top ``max(fetch_k, max(ks))`` snippets, ties ordered fairly
   (`guardrail_eval.ties`); the ungated arm hands over the top ``max(ks)`` as they are, the
   structural arm reorders the top ``fetch_k`` without running anything
   (`guardrail_eval.structural`);
2. gate the top ``fetch_k``: once with every test (the upper bound), and per visible-test
   setting N once per draw with N random units (`guardrail_eval.visible`), optionally with the
   ask loop (`guardrail_eval.asking`); each call is timed, its sandbox runs and cache hits are
   counted (the gate cost an agent would pay). Every gate run is a real run (the verdict cache
   may answer it); no subset's verdict is derived from per-test outcomes;
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

from guardrail.gate import Candidate, Gate, GateResult, Policy
from guardrail.sandbox.base import Sandbox
from guardrail.spec import Spec
from guardrail_eval.answerers import DEFAULT_NOISY_SHARE, hidden_inputs
from guardrail_eval.arms import Arm, ArmKind, GateCost, JudgedItem, QueryOutcome
from guardrail_eval.ask_arms import MeteredGate, query_arms
from guardrail_eval.errors import EvalSettingError
from guardrail_eval.faults import RetryingSandbox, fault_reason
from guardrail_eval.gatejobs import GateJob, gated_outcome, job_of
from guardrail_eval.metrics import DEFAULT_KS
from guardrail_eval.pool import Pool, Query
from guardrail_eval.poolcontext import candidate_metadata
from guardrail_eval.structural import structural_order
from guardrail_eval.systems import Retrieval, RetrievalSystem
from guardrail_eval.truth import Judge, Specs
from guardrail_eval.visible import DEFAULT_DRAWS, visible_indices

__all__ = [
    "EvalProgress",
    "EvalRun",
    "EvalSettings",
    "FaultedVerdict",
    "SystemRun",
    "check_sandbox",
    "parse_visible_tests",
    "run_eval",
]

EvalProgress = Callable[[str, int, int], None]
"""``hook(stage, done, total)``: the stage's description and how far it got."""


def parse_visible_tests(text: str) -> int:
    """``"N"`` -> N: the gate sees N random tests per query and draw.

    Raises:
        EvalSettingError: anything else (``all`` included: the upper bound always runs), or N
            below 1.
    """
    value = text.strip()
    if not value.isdigit() or int(value) < 1:
        raise EvalSettingError(
            f"--visible-tests must be a whole number >= 1, not {text!r}",
            hint="for example --visible-tests 1; the gate with all tests (the upper bound)"
            " always runs",
        )
    return int(value)


@dataclass(frozen=True)
class EvalSettings:
    """How the gate is run and scored.

    Attributes:
        fetch_k: how many of the retriever's top snippets the gate verifies.
        policy: the Gate policy that orders what it hands over.
        visible_tests: one ``visible<N>`` arm per entry (N random tests per draw).
        draws: how many seeded random draws of the visible tests each visible arm runs.
        questions: the ask arms allow 1..questions questions (0: no ask arms).
        noisy_share: the share of questions the noisy answerer answers wrongly (0: no
            noisy-ask arms).
        sweep: also run ``visible<n>`` for every n from 1 to the longest suite.
        seed: seeds the visible-test draws.
        ks: the metric cut-offs.
    """

    fetch_k: int = 10
    policy: Policy = Policy.RERANK
    visible_tests: tuple[int, ...] = (1,)
    draws: int = DEFAULT_DRAWS
    questions: int = 0
    noisy_share: float = DEFAULT_NOISY_SHARE
    sweep: bool = False
    seed: int = 0
    ks: tuple[int, ...] = DEFAULT_KS

    def __post_init__(self) -> None:
        if self.fetch_k < 1:
            raise EvalSettingError(f"--fetch-k must be at least 1, not {self.fetch_k}")
        if len(set(self.visible_tests)) != len(self.visible_tests):
            raise EvalSettingError(f"--visible-tests is repeated: {list(self.visible_tests)}")
        if any(visible < 1 for visible in self.visible_tests):
            raise EvalSettingError(f"--visible-tests must be at least 1: {self.visible_tests}")
        if self.draws < 1:
            raise EvalSettingError(f"--draws must be at least 1, not {self.draws}")
        if self.questions < 0:
            raise EvalSettingError(f"--questions must be at least 0, not {self.questions}")
        if not 0.0 <= self.noisy_share <= 1.0:
            raise EvalSettingError(f"--noisy-share must be from 0 to 1, not {self.noisy_share}")

    @property
    def depth(self) -> int:
        """How deep each system retrieves: enough for the gate and for every cut-off."""
        return max(self.fetch_k, *self.ks)


@dataclass
class SystemRun:
    """A system's arms: ungated first, then structural, upper bound, visible and ask arms.

    ``sweep`` holds the ``visible<n>`` arms of the sweep (n = 1, 2, ...), sharing the default
    arms' objects where they coincide; empty without ``--sweep``.
    """

    system: str
    arms: list[Arm]
    sweep: list[Arm] = field(default_factory=list)

    @property
    def ungated(self) -> Arm:
        return self.arms[0]


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
        arms = [arm for run in self.systems for arm in (*run.arms, *run.sweep)]
        return list({id(arm): arm for arm in arms}.values())

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
    specs = Specs(pool, settings)
    work = [(system, system.queries(pool)) for system in systems]
    for _, queries in work:
        specs.check(queries, settings)
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


class _Loop:
    """One eval's moving parts: specs, the retrying sandbox, the gate, the judge, the timings."""

    def __init__(self, specs: Specs, gate: Gate, report: EvalProgress) -> None:
        self.specs = specs
        self.settings = specs.settings
        self.report = report
        self.sandbox = RetryingSandbox.around(gate.sandbox)
        cache = gate.cache if gate.cache is not None else False
        self.gate = MeteredGate(self.sandbox, cache=cache, policy=self.settings.policy)
        self.judge = Judge(Gate(self.sandbox, cache=cache), specs)
        self.timings: dict[str, float] = {}

    def run_system(self, system: RetrievalSystem, queries: Sequence[Query]) -> SystemRun:
        """Index, retrieve, gate every setting, judge: one system's arms."""
        pool, name, settings = self.specs.pool, system.name, self.settings
        with self._timed(f"{name}.index_s"):
            stage = f"{name}: indexing the corpus"
            system.prepare(pool, lambda done, total: self.report(stage, done, total))
        with self._timed(f"{name}.retrieve_s"):
            retrievals = []
            for done, query in enumerate(queries, start=1):
                retrievals.append(system.retrieve(pool, query, settings.depth))
                self.report(f"{name}: retrieving", done, len(queries))
        work = list(zip(queries, retrievals, strict=True))
        draws = settings.draws
        with self._timed(f"{name}.gate_s"):
            # The upper bound and the sweep need no question: the gate does not ask there.
            upper = Arm(system=name, kind=ArmKind.UPPER_BOUND)
            gated = [(upper, self._gate_all(upper, work, draws=1, visible=None, ask=False))]
            defaults: list[Arm] = []
            visible_arms: dict[int, Arm] = {}
            for n in settings.visible_tests:
                arm = visible_arms[n] = Arm(name, ArmKind.VISIBLE, n, draws=draws)
                arms = self._setting_arms(arm)
                gated += zip(arms, self._ask_all(arm, work, n, arms), strict=True)
                defaults += arms
            sweep = range(1, max(len(q.test_suite) for q in queries) + 1) if settings.sweep else ()
            for n in sweep:
                if n not in visible_arms:
                    arm = visible_arms[n] = Arm(name, ArmKind.VISIBLE, n, draws=draws)
                    gated.append(
                        (arm, self._gate_all(arm, work, draws=draws, visible=n, ask=False))
                    )
        with self._timed(f"{name}.ground_truth_s"):
            stage = f"{name}: judging against all tests"
            pairs = [(query, item.corpus_id) for query, retrieval in work
                     for item in retrieval.ranking]  # fmt: skip
            self.judge.judge_all(pairs, lambda done, total: self.report(stage, done, total))
        ungated = Arm(system=name, kind=ArmKind.UNGATED)
        structural = Arm(system=name, kind=ArmKind.STRUCTURAL)
        for query, retrieval in work:
            ungated.outcomes.append(self._retrieved(query, retrieval, structural=False))
            structural.outcomes.append(self._retrieved(query, retrieval, structural=True))
        for arm, results in gated:
            arm.outcomes = [gated_outcome(job, self.judge) for job in results]
        return SystemRun(
            name,
            [ungated, structural, upper, *defaults],
            sweep=[visible_arms[n] for n in sweep],
        )

    def _retrieved(self, query: Query, retrieval: Retrieval, *, structural: bool) -> QueryOutcome:
        """The ranking as retrieved (its top ``max(ks)``), or reordered by the structural picker."""
        top, fetch_k, corpus = max(self.settings.ks), self.settings.fetch_k, self.specs.pool.corpus
        ranked = list(enumerate(retrieval.ranking, start=1))
        if structural:
            head = ranked[:fetch_k]
            order = structural_order([corpus[item.corpus_id].code for _, item in head])
            ranked = [head[i] for i in order] + ranked[fetch_k:]
        items = tuple(
            JudgedItem(item.corpus_id, item.score, rank, self.judge.truth(query, item.corpus_id))
            for rank, item in ranked[:top]
        )
        return QueryOutcome(query, items, retrieval.snippet_scores)

    def _gate_all(
        self,
        arm: Arm,
        work: Sequence[tuple[Query, Retrieval]],
        *,
        draws: int,
        visible: int | None,
        ask: bool,
    ) -> list[GateJob]:
        """Gate every query's top ``fetch_k`` once per draw, one timed call each."""
        stage = f"{arm.system}: gating ({_short(arm)})"
        jobs: list[GateJob] = []
        total = draws * len(work)
        for draw in range(draws):
            for query, retrieval in work:
                indices = (
                    None
                    if visible is None
                    else visible_indices(query, visible, draw, self.settings.seed)
                )
                spec = self.specs.get(query, indices)
                result, cost = self._gate_one(retrieval, spec, ask=ask)
                self.judge.remember(query, result, spec)
                silent = result.question is None if ask else None
                jobs.append(GateJob(query, result, cost, draw, indices, silent=silent))
                self.report(stage, len(jobs), total)
        return jobs

    def _setting_arms(self, visible: Arm) -> list[Arm]:
        """A visible setting's arms: the gate as it is, its consensus, agree, then up to 1..Q
        questions answered by the noisy answerer, then by the oracle (an upper bound)."""
        settings, name, n = self.settings, visible.system, visible.visible
        asked = range(1, settings.questions + 1)
        noisy = [] if settings.noisy_share <= 0 else [
            Arm(name, ArmKind.NOISY_ASK, n, q, draws=settings.draws) for q in asked
        ]  # fmt: skip
        return [
            visible,
            Arm(name, ArmKind.CONSENSUS, n, draws=settings.draws),
            Arm(name, ArmKind.AGREE, n, draws=settings.draws),
            *noisy,
            *(Arm(name, ArmKind.ORACLE_ASK, n, q, draws=settings.draws) for q in asked),
        ]

    def _ask_all(
        self, arm: Arm, work: Sequence[tuple[Query, Retrieval]], visible: int, arms: list[Arm]
    ) -> list[list[GateJob]]:
        """The rounds per (draw, query): one list of gate jobs per arm of `_setting_arms`."""
        settings, pool = self.settings, self.specs.pool
        stage = f"{arm.system}: gating ({_short(arm)})"
        if settings.questions:
            stage += f" and asking up to {settings.questions} questions"
        by_arm: list[list[GateJob]] = [[] for _ in arms]
        total, done = settings.draws * len(work), 0
        noisy = any(a.kind is ArmKind.NOISY_ASK for a in arms)
        for draw in range(settings.draws):
            for query, retrieval in work:
                indices = visible_indices(query, visible, draw, settings.seed)
                spec = self.specs.get(query, indices)
                oracle = pool.canonical(query)
                got = query_arms(
                    self.gate,
                    self._candidates(retrieval),
                    spec,
                    oracle.code,
                    settings.questions,
                    oracle_metadata=candidate_metadata(pool, oracle),
                    excluded=hidden_inputs(self.specs.get(query, None), spec),
                    noisy=(settings.noisy_share, settings.seed, f"{query.query_id}:{draw}")
                    if noisy
                    else None,
                )
                runs = [got.oracle[0], got.consensus, got.agree, *got.noisy, *got.oracle[1:]]
                seen: set[int] = set()
                for setting_arm, jobs, run in zip(arms, by_arm, runs, strict=True):
                    # The judge counts each gate call once (consensus and agree reorder or
                    # withhold round 0's judged candidates: the same call).
                    if id(run.result.judged) not in seen:
                        seen.add(id(run.result.judged))
                        self.judge.remember(query, run.result, spec)
                    noisy_arm = setting_arm.kind is ArmKind.NOISY_ASK
                    jobs.append(job_of(query, run, draw, indices, noisy=noisy_arm))
                done += 1
                self.report(stage, done, total)
        return by_arm

    def _candidates(self, retrieval: Retrieval) -> list[Candidate]:
        pool = self.specs.pool
        return [
            Candidate(
                code=pool.corpus[item.corpus_id].code,
                id=item.corpus_id,
                score=item.score,
                metadata=candidate_metadata(pool, pool.corpus[item.corpus_id]),
            )
            for item in retrieval.ranking[: self.settings.fetch_k]
        ]

    def _gate_one(
        self, retrieval: Retrieval, spec: Spec, *, ask: bool
    ) -> tuple[GateResult, GateCost]:
        candidates = self._candidates(retrieval)
        runs_before = self.sandbox.jobs
        started = time.perf_counter()
        result = self.gate.gate(candidates, spec, ask=ask)
        latency = time.perf_counter() - started
        hits = sum(1 for item in result.judged if item.verdict.cached)
        return result, GateCost(latency, self.sandbox.jobs - runs_before, hits, len(result.judged))

    @contextmanager
    def _timed(self, key: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.timings[key] = time.perf_counter() - started


def _short(arm: Arm) -> str:
    """The arm's name without its system: ``visible1+ask2``."""
    return arm.name.removeprefix(arm.system + "+")
