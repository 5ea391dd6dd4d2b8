"""The report's figures as PNG bytes (matplotlib's Agg canvas; no pyplot, no global state).

- `exec_at_k_plot`: exec@k against k, each system ungated (solid) and gated (dashed);
- `miss_sources_plot`: where the rank-1 misses come from, by bug type, per arm;
- `gate_latency_plot`: per-query gate latency of every gated arm.

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

from guardrail.safetext import one_line
from guardrail_eval.summary import ArmSummary, Summary

__all__ = ["exec_at_k_plot", "gate_latency_plot", "miss_sources_plot"]

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


@_plain_text
def exec_at_k_plot(summary: Summary) -> bytes:
    """exec@k curves, ungated vs gated, one colour per system."""
    ks = summary.settings.ks
    figure = Figure(figsize=(6.4, 4.0))
    axes = figure.add_subplot()
    systems = list(dict.fromkeys(arm.system for arm in summary.arms))
    colours = {system: f"C{index}" for index, system in enumerate(systems)}
    styles = ["--", ":", "-."]
    for arm in summary.arms:
        gated_index = _gated_index(summary, arm)
        axes.plot(
            ks,
            [arm.metrics[f"exec@{k}"] for k in ks],
            color=colours[arm.system],
            linestyle="-" if gated_index is None else styles[gated_index % len(styles)],
            marker="o",
            label=_label(arm.name),
        )
    axes.set_xticks(ks)
    axes.set_ylim(0.0, 1.05)
    axes.set_xlabel("k")
    axes.set_ylabel("exec@k (share of queries)")
    axes.set_title("exec@k: ungated (solid) vs gated (dashed)")
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    return _png(figure)


@_plain_text
def miss_sources_plot(summary: Summary) -> bytes:
    """Stacked bars: rank-1 items that fail a test, per arm, split by bug type.

    The 20 most frequent bug types have their own colour; the rest are one bar segment.
    """
    arms = summary.arms
    totals: dict[str, int] = {}
    for arm in arms:
        for bug, count in arm.rank1_misses.by_bug_type.items():
            totals[bug] = totals.get(bug, 0) + count
    ranked = sorted(totals, key=lambda bug: (-totals[bug], bug))
    bug_types = sorted(ranked[:_BUG_TYPES_SHOWN])
    others = set(ranked[_BUG_TYPES_SHOWN:])
    figure = Figure(figsize=(8.0, 0.5 * len(arms) + 1.6))
    axes = figure.add_subplot()
    positions = list(range(len(arms)))
    left = [0] * len(arms)
    segments = [(_label(bug), {bug}) for bug in bug_types]
    if others:
        segments.append((f"{len(others)} other bug types", others))
    for index, (label, bugs) in enumerate(segments):
        counts = [sum(arm.rank1_misses.by_bug_type.get(b, 0) for b in bugs) for arm in arms]
        axes.barh(positions, counts, left=left, color=f"C{index % 10}", label=label)
        left = [a + b for a, b in zip(left, counts, strict=True)]
    # Fixed positions with explicit labels: arm names are never read as categories to parse.
    axes.set_yticks(positions, labels=[_label(arm.name) for arm in arms])
    axes.invert_yaxis()
    axes.set_xlabel("queries whose rank-1 item fails a test")
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
    """Box plots of the per-query gate latency (ms) of each gated arm."""
    gated = [arm for arm in summary.arms if arm.gate_cost is not None]
    figure = Figure(figsize=(6.4, 0.5 * len(gated) + 1.6))
    axes = figure.add_subplot()
    data = [arm.gate_cost.latencies_ms for arm in gated if arm.gate_cost is not None]
    if data:
        labels = [_label(arm.name) for arm in gated]
        axes.boxplot(data, orientation="horizontal", tick_labels=labels)
        axes.invert_yaxis()
    axes.set_xscale("log")
    axes.set_xlabel(f"gate latency per query, ms (fetch_k = {summary.settings.fetch_k})")
    axes.set_title("Gate latency (verify + policy, per query)")
    axes.grid(axis="x", alpha=0.3)
    figure.tight_layout()
    return _png(figure)


def _gated_index(summary: Summary, arm: ArmSummary) -> int | None:
    if not arm.gated:
        return None
    siblings = [other.name for other in summary.arms if other.system == arm.system and other.gated]
    return siblings.index(arm.name)


def _png(figure: Figure) -> bytes:
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=_DPI)
    return buffer.getvalue()
