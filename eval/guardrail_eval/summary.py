"""The statistics of an eval run: metrics, agent view, misses, gate cost, intervals, tests.

`summarize` turns an `EvalRun` into a `Summary` (pydantic, written as ``summary.json``); the
reports render it. Per arm: the release's metrics (4 decimals), a percentile bootstrap 95%
interval for every metric and agent-view share, the rank-1 miss composition, the
canonical-below-a-distractor share (systems that score the whole pool) and, for gated arms, the
gate cost per query and the comparison with the same system ungated: paired bootstrap intervals
of every gated-minus-ungated difference, and McNemar's exact test for exec@1 and for "acts on
buggy code". ``faults`` counts the sandbox faults re-run and names those left: while any is left
(or the pool's own build was left with one) the numbers are incomplete, and the CLI says so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray
from pydantic import BaseModel, Field

from guardrail_eval.build import describe_faults, read_build_report
from guardrail_eval.metrics import (
    AGENT_KEYS,
    RankedQuery,
    agent_view,
    canonical_below_distractor,
    metric_keys,
    per_query_vectors,
    rank1_miss_composition,
    round_metrics,
)
from guardrail_eval.pool import DISTRACTOR_METADATA_FILE, EXECUTION_CACHE_FILE, OPTIONAL_FILES
from guardrail_eval.runner import Arm, EvalRun, visible_label
from guardrail_eval.stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    BootstrapInterval,
    McNemarResult,
    bootstrap_cis,
    mcnemar_paired,
)
from guardrail_eval.validation import ValidationSummary

__all__ = [
    "AgentShares",
    "ArmSummary",
    "Comparison",
    "FaultItem",
    "Faults",
    "GateCostSummary",
    "Headline",
    "Interval",
    "McNemar",
    "Misses",
    "PoolInfo",
    "SettingsInfo",
    "Summary",
    "summarize",
]

SUMMARY_VERSION = 3  # 2: faults; 3: validation
_DIGITS = 4
VALIDATION = "pool validation"  # FaultItem.judged_by of the label check's faults
_UNUSED_BECAUSE = {
    DISTRACTOR_METADATA_FILE: "present, not used (the metrics need only the corpus and queries)",
    EXECUTION_CACHE_FILE: "present, not used: every verdict comes from running the code here",
}


class Interval(BaseModel):
    """An estimate (a mean, or a mean difference) and its 95% bootstrap interval."""

    estimate: float
    low: float
    high: float

    @classmethod
    def of(cls, interval: BootstrapInterval) -> Interval:
        return cls(
            estimate=round(interval.estimate, _DIGITS),
            low=round(interval.low, _DIGITS),
            high=round(interval.high, _DIGITS),
        )


class McNemar(BaseModel):
    """McNemar's exact test of ungated vs gated on one 0/1 outcome per query."""

    outcome: str
    ungated_only: int = Field(description="queries where only the ungated arm had the outcome")
    gated_only: int = Field(description="queries where only the gated arm had the outcome")
    both: int
    neither: int
    p_value: float

    @classmethod
    def of(cls, outcome: str, result: McNemarResult) -> McNemar:
        return cls(
            outcome=outcome,
            ungated_only=result.a_only,
            gated_only=result.b_only,
            both=result.both,
            neither=result.neither,
            p_value=result.p_value,
        )


class AgentShares(BaseModel):
    """What the agent taking the top result got: buggy code, correct code, or nothing."""

    n_queries: int
    n_buggy: int
    n_correct: int
    n_nothing: int
    buggy: float
    correct: float
    nothing: float


class Misses(BaseModel):
    """Rank-1 items that fail a test: how many, how many are the query's own distractors."""

    n_misses: int
    n_paired: int
    paired_share: float | None
    by_bug_type: dict[str, int]


class BelowShare(BaseModel):
    """Queries whose canonical scores below one of its paired distractors."""

    n_scored: int
    n_below: int
    share: float | None
    interval: Interval | None = None


class GateCostSummary(BaseModel):
    """What gating cost per query (wall clock of one ``Gate.gate`` call of fetch_k snippets)."""

    latency_p50_ms: float
    latency_p95_ms: float
    latency_mean_ms: float
    sandbox_runs: int
    cache_hits: int
    abstained: int
    queries_with_hidden_tests: int
    latencies_ms: list[float]


class Comparison(BaseModel):
    """Gated vs the same system ungated, query by query."""

    difference: dict[str, Interval] = Field(description="gated minus ungated, paired bootstrap")
    mcnemar_exec_at_1: McNemar
    mcnemar_acted_on_buggy: McNemar


class ArmSummary(BaseModel):
    """One system under one gate setting."""

    name: str
    system: str
    gated: bool
    visible_tests: str | None = Field(description="'all' or N for gated arms; None ungated")
    results_file: str
    n_queries: int
    metrics: dict[str, float]
    intervals: dict[str, Interval]
    agent: AgentShares
    rank1_misses: Misses
    canonical_below: BelowShare | None = None
    gate_cost: GateCostSummary | None = None
    vs_ungated: Comparison | None = None


class Headline(BaseModel):
    """The main job's answer for one system and gate setting."""

    system: str
    visible_tests: str
    ungated_buggy: float
    gated_buggy: float
    gated_nothing: float
    text: str


class PoolInfo(BaseModel):
    name: str
    source: str | None
    n_queries: int
    n_corpus: int
    optional_files: dict[str, str]


class SettingsInfo(BaseModel):
    fetch_k: int
    policy: str
    visible_tests: list[str]
    ks: list[int]


class FaultItem(BaseModel):
    """A verdict still decided by the machine after the retries (see `guardrail_eval.faults`)."""

    query_id: str
    corpus_id: str
    reason: str = Field(description="sandbox_fault or starved_timeout")
    judged_by: str = Field(description="'ground truth', 'pool validation' or the gated arm's name")


class Faults(BaseModel):
    """Sandbox faults: how many jobs were re-run, which verdicts are still faults.

    A faulted verdict counts as "did not pass" in the metrics, which is not what the candidate
    did: while ``remaining`` > 0 or ``pool_build`` names faults, the numbers are incomplete.
    """

    retried: int
    remaining: int
    items: list[FaultItem]
    pool_build: str | None = Field(
        default=None, description="the pool's build left faults (named): it was not cached"
    )

    @property
    def incomplete(self) -> bool:
        return self.remaining > 0 or self.pool_build is not None

    def describe(self, most: int = 3) -> str:
        """One line naming the first ``most`` faults left (and the pool build's)."""
        parts = []
        if self.remaining:
            named = "; ".join(
                f"{item.query_id} {item.corpus_id} ({item.judged_by}: {item.reason})"
                for item in self.items[:most]
            )
            more = f"; and {self.remaining - most} more" if self.remaining > most else ""
            parts.append(f"{self.remaining} verdict(s) still sandbox faults: {named}{more}")
        if self.pool_build is not None:
            parts.append(f"pool build: {self.pool_build}")
        return "; ".join(parts)


class Summary(BaseModel):
    """Everything ``summary.json`` holds."""

    version: int = SUMMARY_VERSION
    pool: PoolInfo
    settings: SettingsInfo
    bootstrap: dict[str, object]
    ground_truth: str
    sandbox: str
    cache: str
    verifications: int
    sandbox_runs: int
    timings_s: dict[str, float]
    faults: Faults
    validation: ValidationSummary | None = Field(
        default=None, description="the pool's labels run against their suites (None: not run)"
    )
    headlines: list[Headline]
    arms: list[ArmSummary]


def summarize(run: EvalRun, *, validation: ValidationSummary | None = None) -> Summary:
    """Compute every statistic of ``run`` (bootstrap: 5,000 resamples, seed 20260510).

    ``validation`` is what `guardrail_eval.validation` found in the pool (kept as it is).
    """
    pool, settings = run.pool, run.settings
    arms: list[ArmSummary] = []
    headlines: list[Headline] = []
    for system_run in run.systems:
        base_ranked = system_run.ungated.ranked_queries(pool)
        base_vectors = per_query_vectors(base_ranked, settings.ks)
        base = _arm_summary(system_run.ungated, base_ranked, settings.ks, base_vectors)
        arms.append(base)
        for arm in system_run.gated:
            ranked = arm.ranked_queries(pool)
            vectors = per_query_vectors(ranked, settings.ks)
            gated = _arm_summary(arm, ranked, settings.ks, vectors, ungated=base_vectors)
            arms.append(gated)
            headlines.append(_headline(base, gated))
    return Summary(
        pool=PoolInfo(
            name=pool.name,
            source=str(pool.source) if pool.source is not None else None,
            n_queries=len(pool.queries),
            n_corpus=len(pool.corpus),
            optional_files={
                name: _UNUSED_BECAUSE[name] if pool.optional_files_used.get(name) else "absent"
                for name in OPTIONAL_FILES
            },
        ),
        settings=SettingsInfo(
            fetch_k=settings.fetch_k,
            policy=settings.policy.value,
            visible_tests=[visible_label(v) for v in settings.visible_tests],
            ks=list(settings.ks),
        ),
        bootstrap={
            "resamples": BOOTSTRAP_RESAMPLES,
            "seed": BOOTSTRAP_SEED,
            "interval": "95% percentile interval",
            "generator": "numpy.random.default_rng(seed); queries resampled with replacement",
            "paired": "differences resample the same query indices for both arms",
        },
        ground_truth=(
            "a snippet counts as correct (passes_all_tests) when it ran against the query's full"
            " test suite in the Docker sandbox and passed every test, hidden tests included"
        ),
        sandbox=run.sandbox,
        cache=run.cache,
        verifications=run.verifications,
        sandbox_runs=run.sandbox_runs,
        timings_s={key: round(value, 3) for key, value in run.timings.items()},
        faults=_faults(run, validation),
        validation=validation,
        headlines=headlines,
        arms=arms,
    )


def _faults(run: EvalRun, validation: ValidationSummary | None) -> Faults:
    checked = validation.faults if validation is not None else []
    items = [
        FaultItem(query_id=f.query_id, corpus_id=f.corpus_id, reason=f.reason, judged_by=VALIDATION)
        for f in checked
    ]
    items += [
        FaultItem(
            query_id=f.query_id, corpus_id=f.corpus_id, reason=f.reason, judged_by=f.judged_by
        )
        for f in run.faults()
    ]
    build = read_build_report(run.pool)
    unclean = build is not None and build.clean is False
    return Faults(
        retried=run.retried + (validation.retried if validation is not None else 0),
        remaining=len(items),
        items=items,
        pool_build=describe_faults(build) if build is not None and unclean else None,
    )


def results_file_name(arm: Arm) -> str:
    """``results/<arm name>.json``, relative to the output folder."""
    return f"results/{arm.name}.json"


def _arm_summary(
    arm: Arm,
    ranked: list[RankedQuery],
    ks: Sequence[int],
    vectors: Mapping[str, NDArray[np.float64]],
    *,
    ungated: Mapping[str, NDArray[np.float64]] | None = None,
) -> ArmSummary:
    """The arm's statistics; with ``ungated`` (its system's vectors) the comparison too."""
    keys = [*metric_keys(ks), *AGENT_KEYS]
    intervals = bootstrap_cis({key: vectors[key] for key in keys})
    view = agent_view(ranked)
    misses = rank1_miss_composition(ranked)
    summary = ArmSummary(
        name=arm.name,
        system=arm.system,
        gated=arm.gated,
        visible_tests=visible_label(arm.visible) if arm.gated else None,
        results_file=results_file_name(arm),
        n_queries=len(ranked),
        metrics=round_metrics({key: float(vectors[key].mean()) for key in metric_keys(ks)}),
        intervals={key: Interval.of(value) for key, value in intervals.items()},
        agent=AgentShares(
            n_queries=view.n_queries,
            n_buggy=view.n_buggy,
            n_correct=view.n_correct,
            n_nothing=view.n_nothing,
            buggy=round(view.buggy, _DIGITS),
            correct=round(view.correct, _DIGITS),
            nothing=round(view.nothing, _DIGITS),
        ),
        rank1_misses=Misses(
            n_misses=misses.n_misses,
            n_paired=misses.n_paired,
            paired_share=_rounded(misses.paired_share),
            by_bug_type=misses.by_bug_type,
        ),
    )
    if ungated is None:
        summary.canonical_below = _below(ranked)
        return summary
    summary.gate_cost = _gate_cost(arm)
    differences = bootstrap_cis({key: vectors[key] - ungated[key] for key in keys})
    summary.vs_ungated = Comparison(
        difference={key: Interval.of(value) for key, value in differences.items()},
        mcnemar_exec_at_1=McNemar.of(
            "exec@1", mcnemar_paired(ungated["exec@1"], vectors["exec@1"])
        ),
        mcnemar_acted_on_buggy=McNemar.of(
            "acted on buggy code",
            mcnemar_paired(ungated["agent_buggy"], vectors["agent_buggy"]),
        ),
    )
    return summary


def _below(ranked: list[RankedQuery]) -> BelowShare | None:
    share = canonical_below_distractor(ranked)
    if not share.n_scored:
        return None
    vector = [
        1.0 if query.snippet_scores.canonical_below else 0.0
        for query in ranked
        if query.snippet_scores is not None
    ]
    return BelowShare(
        n_scored=share.n_scored,
        n_below=share.n_below,
        share=_rounded(share.share),
        interval=Interval.of(bootstrap_cis({"below": vector})["below"]),
    )


def _gate_cost(arm: Arm) -> GateCostSummary:
    costs = [outcome.cost for outcome in arm.outcomes if outcome.cost is not None]
    latencies = np.array([cost.latency_s * 1000.0 for cost in costs], dtype=np.float64)
    hidden = sum(
        1
        for outcome in arm.outcomes
        if arm.visible is not None and arm.visible < len(outcome.query.test_suite)
    )
    return GateCostSummary(
        latency_p50_ms=round(float(np.percentile(latencies, 50)), 2),
        latency_p95_ms=round(float(np.percentile(latencies, 95)), 2),
        latency_mean_ms=round(float(latencies.mean()), 2),
        sandbox_runs=sum(cost.sandbox_runs for cost in costs),
        cache_hits=sum(cost.cache_hits for cost in costs),
        abstained=sum(1 for outcome in arm.outcomes if not outcome.items),
        queries_with_hidden_tests=hidden,
        latencies_ms=[round(float(value), 3) for value in latencies],
    )


def _headline(ungated: ArmSummary, gated: ArmSummary) -> Headline:
    visible = gated.visible_tests or "all"
    sees = "all tests" if visible == "all" else f"the first {visible} test(s)"
    nothing = f"; nothing handed over {gated.agent.nothing:.1%}" if gated.agent.n_nothing else ""
    return Headline(
        system=gated.system,
        visible_tests=visible,
        ungated_buggy=ungated.agent.buggy,
        gated_buggy=gated.agent.buggy,
        gated_nothing=gated.agent.nothing,
        text=(
            f"acted on buggy code: ungated {ungated.agent.buggy:.1%} -> gated"
            f" {gated.agent.buggy:.1%} ({gated.system}, gate sees {sees}{nothing})"
        ),
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, _DIGITS)
