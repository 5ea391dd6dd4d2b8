"""The shape of ``summary.json``: what `guardrail_eval.summary.summarize` fills in."""

from __future__ import annotations

from pydantic import BaseModel, Field

from guardrail_eval.shortcuts import ShortcutBaselines
from guardrail_eval.stats import BootstrapInterval, McNemarResult
from guardrail_eval.validation import ValidationSummary

__all__ = [
    "AgentShares",
    "ArmSummary",
    "Asking",
    "BelowShare",
    "Comparison",
    "FaultItem",
    "Faults",
    "GateCostSummary",
    "Headline",
    "Interval",
    "McNemar",
    "Misses",
    "NearClones",
    "PoolInfo",
    "SettingsInfo",
    "ShortcutComparison",
    "Summary",
    "Ties",
]

SUMMARY_VERSION = 6  # 2: faults; 3: validation; 4: arms by kind, draws, ties, asking, sweep;
# 5: roles, consensus and noisy-ask arms (ask -> oracle-ask), misses per draw, near clones;
# 6: agree arms
DIGITS = 4


class Interval(BaseModel):
    """An estimate (a mean, or a mean difference) and its 95% bootstrap interval."""

    estimate: float
    low: float
    high: float

    @classmethod
    def of(cls, interval: BootstrapInterval) -> Interval:
        return cls(
            estimate=round(interval.estimate, DIGITS),
            low=round(interval.low, DIGITS),
            high=round(interval.high, DIGITS),
        )


class McNemar(BaseModel):
    """McNemar's exact test of ungated vs another arm on one 0/1 outcome per query."""

    outcome: str
    ungated_only: int = Field(description="queries where only the ungated arm had the outcome")
    gated_only: int = Field(description="queries where only the other arm had the outcome")
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
    """What the agent taking the top result got: buggy code, correct code, or nothing.

    Counts are over every (draw, query) outcome; shares are the means over draws.
    """

    n_queries: int = Field(description="outcomes counted: queries x draws")
    n_buggy: int
    n_correct: int
    n_nothing: int
    buggy: float
    correct: float
    nothing: float


class Misses(BaseModel):
    """Rank-1 items that fail a test: how many, how many are the query's own distractors.

    Counts are per draw (the mean over an arm's draws), never summed over draws."""

    n_misses: float = Field(description="queries whose rank-1 item fails, mean over draws")
    n_paired: float
    paired_share: float | None
    by_bug_type: dict[str, float]


class BelowShare(BaseModel):
    """Queries whose canonical scores below one of its paired distractors."""

    n_scored: int
    n_below: int
    share: float | None
    interval: Interval | None = None


class Ties(BaseModel):
    """Ties in the retriever's scores (`guardrail_eval.ties`), broken by a seeded shuffle."""

    rule: str
    rank1_tied: int = Field(description="queries whose rank-1 score ties with rank 2")
    canonical_tied: int = Field(
        description="queries where a canonical's score ties with one of its paired distractors"
    )
    n_scored: int = Field(description="queries whose canonicals and distractors were all scored")


class GateCostSummary(BaseModel):
    """What gating cost per query (wall clock of one ``Gate.gate`` call of fetch_k snippets)."""

    latency_p50_ms: float
    latency_p95_ms: float
    latency_mean_ms: float
    sandbox_runs: int
    cache_hits: int
    verdicts: int
    abstained: int
    queries_with_hidden_tests: int
    latencies_ms: list[float]


class Comparison(BaseModel):
    """This arm vs the same system ungated, query by query."""

    difference: dict[str, Interval] = Field(description="arm minus ungated, paired bootstrap")
    mcnemar_exec_at_1: McNemar | None = None
    mcnemar_acted_on_buggy: McNemar | None = None


class Asking(BaseModel):
    """Visible and ask arms: how often the agent acted on buggy code with no question raised."""

    silent_buggy: Interval = Field(
        description="acted on buggy code although the final gate round raised no question"
    )
    questions_mean: float = Field(description="questions asked and answered per query")
    raised: float = Field(description="share of queries whose final round raised a question")
    asked: float = Field(description="share of queries where the gate raised a question")
    hidden_probe: float | None = Field(
        default=None,
        description="of those, the share where the gate's own question was a hidden test's"
        " input (never asked; None when it raised none)",
    )
    wrong_answers_mean: float | None = Field(
        default=None, description="answers per query that were not the canonical's (noisy-ask)"
    )


class ArmSummary(BaseModel):
    """One system under one setting."""

    name: str
    system: str
    kind: str = Field(
        description="ungated, structural, upper-bound, visible, consensus, agree, noisy-ask,"
        " oracle-ask"
    )
    role: str = Field(
        description="retriever, baseline (runs no code), result (a deployed agent can have it)"
        " or upper bound (it knows the ground truth: never a result)"
    )
    gated: bool
    visible_tests: str | None = Field(description="'all' for the upper bound, N for visible/ask")
    questions: int | None = None
    draws: int = 1
    results_file: str
    n_queries: int
    metrics: dict[str, float]
    intervals: dict[str, Interval]
    draw_means: dict[str, list[float]] | None = None
    agent: AgentShares
    rank1_misses: Misses
    canonical_below: BelowShare | None = None
    ties: Ties | None = None
    asking: Asking | None = None
    gate_cost: GateCostSummary | None = None
    vs_ungated: Comparison | None = None


class ShortcutComparison(BaseModel):
    """The gate's best honest arm against the best shortcut, query by query (exact sign test
    on acted-on-correct: per-query means over draws against the picker's expected hit)."""

    gate_arm: str
    shortcut: str
    gate_correct: float
    shortcut_correct: float
    gate_higher: int = Field(description="queries where the gate acted on correct more often")
    shortcut_higher: int
    ties: int
    p_value: float


class Headline(BaseModel):
    """The main job's answer for one system: correct / buggy / nothing along the honest arms
    (wrapped at 80 columns between segments); the upper bounds on a line of their own."""

    system: str
    arms: list[str]
    correct: list[float]
    buggy: list[float]
    nothing: list[float]
    text: str
    shortcuts: ShortcutBaselines | None = Field(
        default=None, description="pickers that run nothing, on the same top fetch_k"
    )
    shortcut_wins: bool | None = Field(
        default=None,
        description="the best shortcut acts on correct code at least as often as every honest"
        " gate arm (visible<N>, consensus, agree, noisy-ask)",
    )
    versus_shortcut: ShortcutComparison | None = None
    upper_bounds: str | None = Field(
        default=None, description="the oracle arms and the gate with all tests: not results"
    )


class NearClones(BaseModel):
    """How many paired distractors are near clones of their canonical (within the structural
    picker's family distance), which is what the structural caption rests on."""

    rule: str
    n_distractors: int
    n_near: int
    share: float | None
    median_edits: float | None


class PoolInfo(BaseModel):
    name: str
    source: str | None
    n_queries: int
    n_corpus: int
    optional_files: dict[str, str]
    near_clones: NearClones | None = None


class SettingsInfo(BaseModel):
    fetch_k: int
    policy: str
    visible_tests: list[int]
    draws: int
    questions: int
    noisy_share: float
    sweep: bool
    seed: int
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
    sweep: list[ArmSummary] = Field(
        default_factory=list, description="visible<n> for n = 1.. (with --sweep)"
    )
