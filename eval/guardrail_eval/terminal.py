"""The eval's terminal tables: one per system of a summary, and a pool build's mutation report.

Cells are plain text (`guardrail.safetext.cell`): pool and arm names come from folder and file
names, never markup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich import box
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from guardrail.safetext import cell, one_line

if TYPE_CHECKING:
    from guardrail_eval.build import BuildReport
    from guardrail_eval.summary import Interval, Summary

__all__ = ["mutation_table", "summary_tables"]


def summary_tables(summary: Summary) -> list[Table]:
    """One table per system; fits 80 columns, and a number is never wrapped or folded.

    Every column is ``no_wrap``: when a terminal is too narrow, a cell is cut with an ellipsis
    rather than folded onto the next line, where a p95 of 5,176 ms would read as 517.
    """
    tables = []
    for system in dict.fromkeys(arm.system for arm in summary.arms):
        table = Table(
            title=Text(
                f"{one_line(system)} on {one_line(summary.pool.name)}:"
                f" {summary.pool.n_queries} queries, {summary.pool.n_corpus} snippets"
            ),
            caption=escape(
                "[95% bootstrap interval]; visible arms: means over draws;"
                " * an upper bound (it knows the answers), not a result"
            ),
            box=box.SIMPLE_HEAD,
            pad_edge=False,
        )
        table.add_column("arm", no_wrap=True, max_width=24)
        headers = ["acted on\ncorrect", "acted on\nbuggy", "got\nnothing", "silent\nbuggy"]
        for header in [*headers, "gate ms\np50/p95"]:
            table.add_column(header, justify="right", no_wrap=True)
        for arm in (arm for arm in summary.arms if arm.system == system):
            cost, asking = arm.gate_cost, arm.asking
            bound = " *" if arm.role == "upper bound" else ""
            table.add_row(
                cell(arm.name.removeprefix(system) or "ungated") + bound,
                _cell(arm.intervals["agent_correct"]),
                _cell(arm.intervals["agent_buggy"]),
                _cell(arm.intervals["agent_nothing"]),
                f"{asking.silent_buggy.estimate:.1%}" if asking else "-",
                f"{cost.latency_p50_ms:.0f}/{cost.latency_p95_ms:.0f}" if cost else "-",
            )
        tables.append(table)
    return tables


def _cell(interval: Interval) -> str:
    """A share over its interval, on two lines so the table stays narrow."""
    return f"{interval.estimate:.1%}\n[{100 * interval.low:.0f},{100 * interval.high:.0f}]"


def mutation_table(report: BuildReport) -> Table:
    """Per bug type: candidate edits, tried, kept, dropped (and why), untried."""
    table = Table(title=f"Mutation report (seed {report.seed})")
    table.add_column("bug type", no_wrap=True)
    for header in ["candidates", "tried", "kept", "dropped (why)", "untried"]:
        table.add_column(header, justify="left" if header == "dropped (why)" else "right")
    for bug, stats in report.mutation.by_bug_type.items():
        dropped = ", ".join(f"{reason.value} {n}" for reason, n in sorted(stats.dropped.items()))
        table.add_row(
            bug.value,
            str(stats.candidates),
            str(stats.tried),
            str(stats.kept),
            dropped or "-",
            str(stats.untried),
        )
    return table
