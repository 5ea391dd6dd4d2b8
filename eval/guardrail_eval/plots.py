"""The report's figures as PNG bytes (matplotlib's Agg canvas; no pyplot, no global state).

- `agent_outcomes_plot`: stacked bars per arm: acted on correct, acted on buggy, got nothing,
  with the 95% intervals of the first two;
- `exec_at_k_plot`: exec@k against k per arm, with 95% error bars;
- `miss_sources_plot`: where the rank-1 misses come from, by bug type, per arm;
- `gate_latency_plot`: per-query gate latency of every gated arm, each labelled with how many of
  its verdicts came from the verdict cache (a cached call is not a sandbox run);
- `sweep_plot`: exec@1 and acted on buggy against the number of visible tests (error bars).

Arm names and bug types come from results files and pools, so every figure is drawn with
mathtext and TeX off (a ``$x^2$`` or ``\\frac`` in a bug type is text, not a formula that fails
to parse after the whole eval has run) and every label is one capped line (`_label`).
"""

from __future__ import annotations

import functools
import io
from collections.abc import Callable

import matplotlib
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter, MaxNLocator, NullFormatter

from guardrail.safetext import one_line
from guardrail_eval.summary import ArmSummary, Interval, Summary

__all__ = [
    "agent_outcomes_plot",
    "exec_at_k_plot",
    "gate_latency_plot",
    "miss_sources_plot",
    "sweep_plot",
]

_DPI = 100
_LABEL_LIMIT = 60
_BUG_TYPES_SHOWN = 20
# Text artists take these settings when they are created, tick labels included (they are made
# while the figure is drawn), so each plot builds and saves its figure inside them.


def _plain_text(plot: Callable[[Summary], bytes]) -> Callable[[Summary], bytes]:
    @functools.wraps(plot)
    def plot_as_plain_text(summary: Summary) -> bytes:
        with matplotlib.rc_context({"text.parse_math": False, "text.usetex": False}):
            return plot(summary)

    return plot_as_plain_text


def _label(text: str) -> str:
    """One capped line; a leading ``_`` is kept visible (matplotlib hides such legend labels)."""
    line = one_line(text, _LABEL_LIMIT)
    return " " + line if line.startswith("_") else line


def _arm_label(arm: ArmSummary) -> str:
    """The arm's name; an upper bound (an oracle, or every test) says so."""
    return f"{arm.name} [upper bound]" if arm.role == "upper bound" else arm.name


def _error(interval: Interval) -> tuple[float, float]:
    """Distances from the estimate to the interval's ends (never negative: rounding)."""
    return max(interval.estimate - interval.low, 0.0), max(interval.high - interval.estimate, 0.0)


def _errors(intervals: list[Interval]) -> list[list[float]]:
    pairs = [_error(interval) for interval in intervals]
    return [[low for low, _ in pairs], [high for _, high in pairs]]


@_plain_text
def agent_outcomes_plot(summary: Summary) -> bytes:
    """Stacked horizontal bars per arm: acted on correct, acted on buggy, got nothing."""
    arms = summary.arms
    figure = Figure(figsize=(8.0, 0.45 * len(arms) + 1.8))
    axes = figure.add_subplot()
    positions = list(range(len(arms)))
    left = [0.0] * len(arms)
    for key, label, colour in _AGENT_SEGMENTS:
        shares = [arm.intervals[key].estimate for arm in arms]
        axes.barh(positions, shares, left=left, color=colour, label=label)
        for position, start, share in zip(positions, left, shares, strict=True):
            if share >= 0.06:
                axes.text(start + share / 2, position, f"{share:.0%}", ha="center", va="center")
        left = [a + b for a, b in zip(left, shares, strict=True)]
    # The two boundaries carry the intervals: correct | buggy is the acted-on-correct share,
    # buggy | nothing is 1 - got-nothing (so its interval is got-nothing's, mirrored).
    correct = [arm.intervals["agent_correct"] for arm in arms]
    nothing = [arm.intervals["agent_nothing"] for arm in arms]
    mirrored = [Interval(estimate=1 - i.estimate, low=1 - i.high, high=1 - i.low) for i in nothing]
    for intervals in (correct, mirrored):
        axes.errorbar(
            [interval.estimate for interval in intervals],
            positions,
            xerr=_errors(intervals),
            fmt="none",
            ecolor="black",
            capsize=3,
            linewidth=1,
        )
    axes.set_yticks(positions, labels=[_label(_arm_label(arm)) for arm in arms])
    axes.invert_yaxis()
    axes.set_xlim(0.0, 1.0)
    axes.set_xlabel("share of queries (mean over draws); whiskers: 95% intervals")
    axes.set_title("What the agent acted on")
    axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    axes.grid(axis="x", alpha=0.3)
    figure.tight_layout()
    return _png(figure)


_AGENT_SEGMENTS = (
    ("agent_correct", "acted on correct", "#2a9d8f"),
    ("agent_buggy", "acted on buggy", "#e76f51"),
    ("agent_nothing", "got nothing", "#bbbbbb"),
)


@_plain_text
def exec_at_k_plot(summary: Summary) -> bytes:
    """exec@k curves with 95% error bars, one colour per system, one line style per arm kind."""
    ks = summary.settings.ks
    figure = Figure(figsize=(7.2, 4.4))
    axes = figure.add_subplot()
    systems = list(dict.fromkeys(arm.system for arm in summary.arms))
    colours = {system: f"C{index}" for index, system in enumerate(systems)}
    for arm in summary.arms:
        intervals = [arm.intervals[f"exec@{k}"] for k in ks]
        axes.errorbar(
            ks,
            [interval.estimate for interval in intervals],
            yerr=_errors(intervals),
            color=colours[arm.system],
            linestyle=_STYLES.get(arm.kind, "-."),
            marker=_MARKERS.get(arm.kind, "o"),
            capsize=3,
            label=_label(_arm_label(arm)),
        )
    axes.set_xticks(ks)
    axes.set_ylim(0.0, 1.05)
    axes.set_xlabel("k")
    axes.set_ylabel("exec@k (share of queries)")
    axes.set_title("exec@k per arm (95% intervals)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    figure.tight_layout()
    return _png(figure)


_STYLES = {"ungated": "-", "structural": ":", "upper-bound": "--"}
_MARKERS = {
    "ungated": "o",
    "structural": "s",
    "upper-bound": "^",
    "visible": "D",
    "consensus": "P",
    "agree": "X",
    "noisy-ask": "v",
    "oracle-ask": "1",
}


@_plain_text
def miss_sources_plot(summary: Summary) -> bytes:
    """Stacked bars: rank-1 items that fail a test, per arm, split by bug type.

    The 20 most frequent bug types have their own colour; the rest are one bar segment.
    """
    arms = summary.arms
    totals: dict[str, float] = {}
    for arm in arms:
        for bug, count in arm.rank1_misses.by_bug_type.items():
            totals[bug] = totals.get(bug, 0) + count
    ranked = sorted(totals, key=lambda bug: (-totals[bug], bug))
    bug_types = sorted(ranked[:_BUG_TYPES_SHOWN])
    others = set(ranked[_BUG_TYPES_SHOWN:])
    figure = Figure(figsize=(8.0, 0.5 * len(arms) + 1.6))
    axes = figure.add_subplot()
    positions = list(range(len(arms)))
    left = [0.0] * len(arms)
    segments = [(_label(bug), {bug}) for bug in bug_types]
    if others:
        segments.append((f"{len(others)} other bug types", others))
    for index, (label, bugs) in enumerate(segments):
        counts = [sum(arm.rank1_misses.by_bug_type.get(b, 0.0) for b in bugs) for arm in arms]
        axes.barh(positions, counts, left=left, color=f"C{index % 10}", label=label)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    # Fixed positions with explicit labels: arm names are never read as categories to parse.
    axes.set_yticks(positions, labels=[_label(_arm_label(arm)) for arm in arms])
    axes.invert_yaxis()
    axes.set_xlabel("queries whose rank-1 item fails a test (mean over draws)")
    axes.set_title("Rank-1 misses by bug type")
    if bug_types:
        axes.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    else:
        axes.text(0.5, 0.5, "no rank-1 misses", transform=axes.transAxes, ha="center")
    axes.grid(axis="x", alpha=0.3)
    figure.tight_layout()
    return _png(figure)


@_plain_text
def gate_latency_plot(summary: Summary) -> bytes:
    """Box plots of the per-query gate latency (ms) of each gated arm, cache hits labelled."""
    gated = [arm for arm in summary.arms if arm.gate_cost is not None]
    figure = Figure(figsize=(7.2, 0.5 * len(gated) + 1.8))
    axes = figure.add_subplot()
    data = [arm.gate_cost.latencies_ms for arm in gated if arm.gate_cost is not None]
    if data:
        labels = [_label(_arm_label(arm)) + _cached(arm) for arm in gated]
        axes.boxplot(data, orientation="horizontal", tick_labels=labels)
        axes.invert_yaxis()
    axes.set_xscale("log")
    # Plain tick labels: with mathtext off, the log axis' default ones print as raw TeX.
    axes.xaxis.set_major_formatter(FuncFormatter(lambda value, _: f"{value:g}"))
    axes.xaxis.set_minor_formatter(NullFormatter())
    axes.set_xlabel(
        f"ms per query (fetch_k = {summary.settings.fetch_k}); cache hits are lookups, not runs"
    )
    axes.set_title("Gate latency (verify + policy, per query)")
    axes.grid(axis="x", alpha=0.3)
    figure.tight_layout()
    return _png(figure)


def _cached(arm: ArmSummary) -> str:
    cost = arm.gate_cost
    if cost is None or not cost.verdicts:
        return ""
    if cost.cache_hits == cost.verdicts:
        return "\n(all cache hits)"
    return f"\n({cost.cache_hits} of {cost.verdicts} cache hits)"


_SWEEP_LINES = (("exec@1", "-", "exec@1"), ("agent_buggy", "--", "acted on buggy"))


@_plain_text
def sweep_plot(summary: Summary) -> bytes:
    """exec@1 and acted on buggy against the number of visible tests, per system."""
    figure = Figure(figsize=(7.2, 4.4))
    axes = figure.add_subplot()
    systems = list(dict.fromkeys(arm.system for arm in summary.sweep))
    for index, system in enumerate(systems):
        arms = [arm for arm in summary.sweep if arm.system == system]
        counts = [int(arm.visible_tests or 0) for arm in arms]
        for key, style, what in _SWEEP_LINES:
            intervals = [arm.intervals[key] for arm in arms]
            axes.errorbar(
                counts,
                [interval.estimate for interval in intervals],
                yerr=_errors(intervals),
                color=f"C{index}",
                linestyle=style,
                marker="o",
                capsize=3,
                label=_label(f"{system}: {what}"),
            )
    axes.set_ylim(0.0, 1.05)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("visible tests per query (random, mean over draws)")
    axes.set_ylabel("share of queries")
    axes.set_title("Thin tests: exec@1 and acted on buggy vs visible tests")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    figure.tight_layout()
    return _png(figure)


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI)
    return buffer.getvalue()
