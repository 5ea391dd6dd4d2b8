"""The statistics of an eval run: metrics, agent view, misses, gate cost, intervals, tests.

`summarize` turns an `EvalRun` into a `Summary` (pydantic, written as ``summary.json``); the
reports render it. Per arm: the release's metrics (4 decimals), a percentile bootstrap 95%
interval for every metric and agent-view share, the rank-1 miss composition, the
canonical-below-a-distractor share and the tie counts (systems that score the whole pool) and,
for arms other than the ungated one, the gate cost per query (gated arms) and the comparison
with the same system ungated: paired bootstrap intervals of every difference, and McNemar's exact
test for exec@1 and for "acts on buggy code" for single-draw arms other than the upper bound
(whose exec@1 is the ungated exec@10 by construction: a test of it would say nothing).

An arm with several draws of visible tests is summarised by per-query means over its draws: its
metrics are the mean over draws, its intervals resample queries, and ``draw_means`` shows the
spread between draws. ``faults`` counts the sandbox faults re-run and names those left: while any
is left (or the pool's own build was left with one) the numbers are incomplete, and the CLI says
so.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from numpy.typing import NDArray

from guardrail_eval.arms import Arm, ArmKind
from guardrail_eval.build import describe_faults, read_build_report
from guardrail_eval.headline import best_honest, headline
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
from guardrail_eval.poolcontext import module_text as shipped_module_text
from guardrail_eval.runner import EvalRun
from guardrail_eval.shortcuts import Candidate, picker_values, shortcut_baselines
from guardrail_eval.stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    bootstrap_cis,
    mcnemar_paired,
    sign_test,
)
from guardrail_eval.structural import FAMILY_RULE, near_clone_distances
from guardrail_eval.summary_models import (
    DIGITS,
    AgentShares,
    ArmSummary,
    Asking,
    BelowShare,
    Comparison,
    FaultItem,
    Faults,
    GateCostSummary,
    Headline,
    Interval,
    McNemar,
    Misses,
    NearClones,
    PoolInfo,
    SettingsInfo,
    Summary,
    Ties,
)
from guardrail_eval.ties import TIE_RULE, tied
from guardrail_eval.validation import ValidationSummary

__all__ = [
    "AgentShares",
    "ArmSummary",
    "Asking",
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
    "Ties",
    "arm_vectors",
    "results_file_name",
    "summarize",
]

_DIGITS = DIGITS
VALIDATION = "pool validation"  # FaultItem.judged_by of the label check's faults
_UNUSED_BECAUSE = {
    DISTRACTOR_METADATA_FILE: "present, not used (the metrics need only the corpus and queries)",
    EXECUTION_CACHE_FILE: "present, not used: every verdict comes from running the code here",
}
DRAW_KEYS = ("exec@1", *AGENT_KEYS)
"""The per-draw means kept for arms with several draws (their spread between draws)."""


def summarize(run: EvalRun, *, validation: ValidationSummary | None = None) -> Summary:
    """Compute every statistic of ``run`` (bootstrap: 5,000 resamples, seed 20260510).

    ``validation`` is what `guardrail_eval.validation` found in the pool (kept as it is).
    """
    pool, settings = run.pool, run.settings
    arms: list[ArmSummary] = []
    sweep: list[ArmSummary] = []
    headlines: list[Headline] = []
    for system_run in run.systems:
        base_vectors = arm_vectors(system_run.ungated, run)
        done: dict[str, ArmSummary] = {}
        for arm in (*system_run.arms, *system_run.sweep):
            if arm.name not in done:
                ungated = None if arm.kind is ArmKind.UNGATED else base_vectors
                done[arm.name] = _arm_summary(arm, run, ungated=ungated)
        system_arms = [done[arm.name] for arm in system_run.arms]
        arms += system_arms
        sweep += [done[arm.name] for arm in system_run.sweep]
        headlines.append(_shortcuts(run, system_run.ungated, system_run.arms, system_arms))
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
            near_clones=_near_clones(run),
        ),
        settings=SettingsInfo(
            fetch_k=settings.fetch_k,
            policy=settings.policy.value,
            visible_tests=list(settings.visible_tests),
            draws=settings.draws,
            questions=settings.questions,
            noisy_share=settings.noisy_share,
            sweep=settings.sweep,
            seed=settings.seed,
            ks=list(settings.ks),
        ),
        bootstrap={
            "resamples": BOOTSTRAP_RESAMPLES,
            "seed": BOOTSTRAP_SEED,
            "interval": "95% percentile interval",
            "generator": "numpy.random.default_rng(seed); queries resampled with replacement",
            "paired": "differences resample the same query indices for both arms",
            "draws": "an arm with several draws is resampled by its per-query means over draws",
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
        sweep=sweep,
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


def arm_vectors(arm: Arm, run: EvalRun) -> dict[str, NDArray[np.float64]]:
    """Per-query values of every metric and agent key: means over the arm's draws."""
    flat = per_query_vectors(arm.ranked_queries(run.pool), run.settings.ks)
    return {key: _by_draw(arm, vector).mean(axis=0) for key, vector in flat.items()}


def _by_draw(arm: Arm, vector: NDArray[np.float64]) -> NDArray[np.float64]:
    return vector.reshape(arm.draws, -1)


def _arm_summary(
    arm: Arm,
    run: EvalRun,
    *,
    ungated: Mapping[str, NDArray[np.float64]] | None = None,
) -> ArmSummary:
    """The arm's statistics; with ``ungated`` (its system's vectors) the comparison too."""
    ks = run.settings.ks
    ranked = arm.ranked_queries(run.pool)
    flat = per_query_vectors(ranked, ks)
    vectors = {key: _by_draw(arm, vector).mean(axis=0) for key, vector in flat.items()}
    keys = [*metric_keys(ks), *AGENT_KEYS]
    intervals = bootstrap_cis({key: vectors[key] for key in keys})
    view = agent_view(ranked)
    misses = rank1_miss_composition(ranked)
    summary = ArmSummary(
        name=arm.name,
        system=arm.system,
        kind=arm.kind.value,
        role=arm.kind.role,
        gated=arm.gated,
        visible_tests=_visible(arm),
        questions=arm.questions,
        draws=arm.draws,
        results_file=results_file_name(arm),
        n_queries=len(ranked) // arm.draws,
        metrics=round_metrics({key: float(vectors[key].mean()) for key in metric_keys(ks)}),
        intervals={key: Interval.of(value) for key, value in intervals.items()},
        draw_means=(
            {
                key: [round(float(m), _DIGITS) for m in _by_draw(arm, flat[key]).mean(axis=1)]
                for key in DRAW_KEYS
            }
            if arm.draws > 1
            else None
        ),
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
            n_misses=round(misses.n_misses / arm.draws, _DIGITS),
            n_paired=round(misses.n_paired / arm.draws, _DIGITS),
            paired_share=_rounded(misses.paired_share),
            by_bug_type={
                bug: round(count / arm.draws, _DIGITS) for bug, count in misses.by_bug_type.items()
            },
        ),
    )
    if arm.gated:
        summary.gate_cost = _gate_cost(arm)
        summary.asking = _asking(arm, ranked)
    if ungated is None:
        summary.canonical_below = _below(ranked)
        summary.ties = _ties(ranked)
        return summary
    differences = bootstrap_cis({key: vectors[key] - ungated[key] for key in keys})
    summary.vs_ungated = Comparison(
        difference={key: Interval.of(value) for key, value in differences.items()}
    )
    if arm.draws == 1 and arm.kind is not ArmKind.UPPER_BOUND:
        summary.vs_ungated.mcnemar_exec_at_1 = McNemar.of(
            "exec@1", mcnemar_paired(ungated["exec@1"], vectors["exec@1"])
        )
        summary.vs_ungated.mcnemar_acted_on_buggy = McNemar.of(
            "acted on buggy code", mcnemar_paired(ungated["agent_buggy"], vectors["agent_buggy"])
        )
    return summary


def _visible(arm: Arm) -> str | None:
    if arm.kind is ArmKind.UPPER_BOUND:
        return "all"
    return None if arm.visible is None else str(arm.visible)


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


def _ties(ranked: list[RankedQuery]) -> Ties:
    """Tie counts of a retriever's own ranking (the ungated arm)."""
    rank1 = sum(
        1
        for query in ranked
        if len(query.items) > 1
        and query.items[0].score is not None
        and query.items[1].score is not None
        and tied(query.items[0].score, query.items[1].score)
    )
    scored = [query.snippet_scores for query in ranked if query.snippet_scores is not None]
    canonical = sum(
        1
        for scores in scored
        if any(tied(c, d) for c in scores.canonical for d in scores.distractors)
    )
    return Ties(rule=TIE_RULE, rank1_tied=rank1, canonical_tied=canonical, n_scored=len(scored))


def _asking(arm: Arm, ranked: list[RankedQuery]) -> Asking | None:
    """Silent-buggy and questions, when the arm's gate asked (its outcomes know `silent`)."""
    outcomes = arm.outcomes
    if any(outcome.silent is None for outcome in outcomes):
        return None
    silent_buggy = np.array(
        [
            1.0 if outcome.silent and query.items and not query.items[0].passes_all_tests else 0.0
            for outcome, query in zip(outcomes, ranked, strict=True)
        ]
    )
    interval = bootstrap_cis({"silent": _by_draw(arm, silent_buggy).mean(axis=0)})["silent"]
    asked = [o for o in outcomes if o.hidden_probe or o.questions or not o.silent]
    hidden = [o for o in asked if o.hidden_probe]
    wrong = [o.wrong_answers for o in outcomes if o.wrong_answers is not None]
    return Asking(
        silent_buggy=Interval.of(interval),
        questions_mean=round(float(np.mean([o.questions or 0 for o in outcomes])), _DIGITS),
        raised=round(float(np.mean([0.0 if o.silent else 1.0 for o in outcomes])), _DIGITS),
        asked=round(len(asked) / len(outcomes), _DIGITS),
        hidden_probe=round(len(hidden) / len(asked), _DIGITS) if asked else None,
        wrong_answers_mean=round(float(np.mean(wrong)), _DIGITS) if wrong else None,
    )


def _gate_cost(arm: Arm) -> GateCostSummary:
    costs = [outcome.cost for outcome in arm.outcomes if outcome.cost is not None]
    latencies = np.array([cost.latency_s * 1000.0 for cost in costs], dtype=np.float64)
    hidden = sum(
        1
        for outcome in arm.outcomes
        if outcome.visible is not None and len(outcome.visible) < len(outcome.query.test_suite)
    )
    return GateCostSummary(
        latency_p50_ms=round(float(np.percentile(latencies, 50)), 2),
        latency_p95_ms=round(float(np.percentile(latencies, 95)), 2),
        latency_mean_ms=round(float(latencies.mean()), 2),
        sandbox_runs=sum(cost.sandbox_runs for cost in costs),
        cache_hits=sum(cost.cache_hits for cost in costs),
        verdicts=sum(cost.verdicts for cost in costs),
        abstained=sum(1 for outcome in arm.outcomes if not outcome.items),
        queries_with_hidden_tests=hidden,
        latencies_ms=[round(float(value), 3) for value in latencies],
    )


def _shortcuts(
    run: EvalRun, ungated: Arm, arms: Sequence[Arm], summaries: Sequence[ArmSummary]
) -> Headline:
    """The shortcut pickers on the candidates the gate sees (the system's top ``fetch_k``), the
    best against the gate's best honest arm, and the system's headline."""
    texts: dict[str, str | None] = {}

    def module_text(corpus_id: str) -> str | None:
        if corpus_id not in texts:
            texts[corpus_id] = shipped_module_text(run.pool, run.pool.corpus[corpus_id])
        return texts[corpus_id]

    fetch_k = run.settings.fetch_k
    queries = [
        (
            outcome.query,
            [
                Candidate(
                    item.corpus_id,
                    run.pool.corpus[item.corpus_id].code,
                    item.passes_all_tests,
                    module_text(item.corpus_id),
                )
                for item in outcome.items[:fetch_k]
            ],
        )
        for outcome in ungated.outcomes
    ]
    baselines = shortcut_baselines(queries, f"the top {fetch_k} of {ungated.system}")
    best = best_honest(summaries)
    test = None
    if best is not None:
        (arm,) = [arm for arm in arms if arm.name == best.name]
        gate = arm_vectors(arm, run)["agent_correct"]
        test = sign_test(gate, picker_values(queries, baselines.best))
    return headline(summaries, baselines, test)


def _near_clones(run: EvalRun) -> NearClones | None:
    """The paired distractors within the structural family distance of their canonical."""
    pool = run.pool
    pairs = [
        (pool.canonical(query).code, pool.corpus[cid].code)
        for query in pool.queries
        for cid in query.paired_distractor_corpus_ids
    ]
    if not pairs:
        return None
    found = near_clone_distances(pairs)
    return NearClones(
        rule=f"a distractor {FAMILY_RULE} of its canonical",
        n_distractors=len(found),
        n_near=sum(1 for distance, limit in found if distance <= limit),
        share=round(sum(1 for d, limit in found if d <= limit) / len(found), _DIGITS),
        median_edits=float(np.median([distance for distance, _ in found])),
    )


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, _DIGITS)
