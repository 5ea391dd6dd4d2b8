"""What `guardrail search` prints for a person: one line per candidate, at the console's width.

A table that folds its cells printed hundreds of lines for one result when a failing test was long.
Here every candidate is one line: rank, status, name, where it lives, score, tests passed, and
why it was not verified, each column cut to fit (80 columns when the output is not a terminal).
Every piece of text comes from the index or a candidate, so it goes through `guardrail.safetext`
and is shown as plain `Text`: never markup, never an escape sequence.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Group
from rich.text import Text

from guardrail.gate import GatedCandidate, GateResult, Policy
from guardrail.safetext import one_line
from guardrail.verdict import Verdict

from .verify import STATUS_STYLE

PIPED_WIDTH = 80
"""Columns when the output is not a terminal (a pipe, a file, a log)."""
NAME_MAX = 24
WHERE_MAX = 32
WHY_MIN = 16
ELLIPSIS = "…"


@dataclass(frozen=True)
class Row:
    """One candidate's line, as plain strings before they are cut to width."""

    label: str
    verdict: Verdict
    name: str
    where: str
    score: str
    tests: str
    why: str
    dropped: bool


def row_of(label: str, item: GatedCandidate, source: str, *, dropped: bool) -> Row:
    """The line for one judged candidate; ``source`` says where its tests came from."""
    verdict, metadata = item.verdict, item.candidate.metadata
    passed = sum(t.passed for t in verdict.tests)
    failing = next((t for t in verdict.tests if not t.passed), None)
    why = (
        ""
        if verdict.verified
        else (f"{failing.outcome}: {failing.test}" if failing else verdict.message)
    )
    score = item.candidate.score
    return Row(
        label=label,
        verdict=verdict,
        name=one_line(str(metadata.get("qualified_name") or item.candidate.id)),
        where=one_line(where(metadata)),
        score=f"{score:.3f}" if score is not None else "-",
        tests=f"{passed}/{len(verdict.tests)} {source}" if verdict.tests else "-",
        why=one_line(why),
        dropped=dropped,
    )


def where(metadata: dict[str, Any]) -> str:
    """``file:line`` of a snippet, relative to the current folder when it lies below it.

    ``file`` is relative to the snippet's ``root``; both together name the file the user indexed,
    so two files of the same name in different folders never look alike.
    """
    file = metadata.get("file")
    if not file:
        return "-"
    path = Path(str(file))
    root = metadata.get("root")
    if root and not path.is_absolute():
        path = Path(str(root)) / path
    if path.is_absolute():
        cwd = Path.cwd()
        path = path.relative_to(cwd) if path.is_relative_to(cwd) else path
    line = metadata.get("start_line")
    return f"{path}:{line}" if line else str(path)


def _cut_end(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def _cut_start(text: str, width: int) -> str:
    """Keep the end of a path (its file name and line) when it is too long."""
    return text if len(text) <= width else ELLIPSIS + text[len(text) - max(width - 1, 0) :]


def render(
    title: str, rows: list[Row], caption: str, width: int, *, more_dropped: int = 0
) -> Group:
    """The title, one line per row cut to ``width``, and the caption."""
    label_w = max([len(r.label) for r in rows] + [1])
    status_w = max([len(r.verdict.status.value) for r in rows] + [6])
    score_w = max([len(r.score) for r in rows] + [5])
    tests_w = max([len(r.tests) for r in rows] + [5])
    fixed = label_w + status_w + score_w + tests_w + 6  # six single-space gaps
    name_w = min(max([len(r.name) for r in rows] + [4]), NAME_MAX)
    where_w = min(max([len(r.where) for r in rows] + [5]), WHERE_MAX)
    room = width - fixed - name_w - where_w
    if any(r.why for r in rows) and room < WHY_MIN:
        shrink = WHY_MIN - room
        where_cut = min(shrink, max(where_w - 12, 0))
        where_w -= where_cut
        name_w -= min(shrink - where_cut, max(name_w - 8, 0))
        room = width - fixed - name_w - where_w
    lines: list[Text] = [Text(_cut_end(one_line(title), width), style="bold")]
    header = (
        f"{'#':>{label_w}} {'status':<{status_w}} {'name':<{name_w}} {'where':<{where_w}}"
        f" {'score':>{score_w}} {'tests':<{tests_w}} why not verified"
    )
    lines.append(Text(_cut_end(header, width), style="dim"))
    for row in rows:
        line = Text(style="dim" if row.dropped else "")
        line.append(f"{row.label:>{label_w}} ")
        line.append(
            f"{row.verdict.status.value:<{status_w}}", style=STATUS_STYLE[row.verdict.status]
        )
        line.append(f" {_cut_end(row.name, name_w):<{name_w}}")
        line.append(f" {_cut_start(row.where, where_w):<{where_w}}")
        line.append(f" {row.score:>{score_w}} {row.tests:<{tests_w}}")
        if row.why and room > 1:
            line.append(" " + _cut_end(row.why, room - 1))
        line.rstrip()
        lines.append(line)
    if more_dropped:
        lines.append(Text(f"  ... {more_dropped} more dropped (all are in --json)", style="dim"))
    lines.append(Text(_cut_end(caption, width), style="dim"))
    return Group(*lines)


def caption(result: GateResult, handed: list[GatedCandidate]) -> str:
    """``policy rerank: 2 handed over (1 failed, 2 verified)``; under ``agree``, when the
    verified disagree, it says they were withheld."""
    counts: dict[str, int] = {}
    for item in result.judged:
        counts[item.verdict.status.value] = counts.get(item.verdict.status.value, 0) + 1
    summary = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
    said = f"policy {result.policy.value}: {len(handed)} handed over ({summary or 'no results'})"
    if result.policy is Policy.AGREE and result.question is not None:
        said += "; withheld: they disagree"  # the question follows
    return said
