"""The eval's output folder: results files, ``summary.json``, ``report.md``, ``report.html``.

`write_outputs` renders everything in memory and then writes all files at once
(`guardrail_eval.outputs.replace_outputs`), so a failure leaves no half-written output behind,
and an earlier run's outputs are replaced only with ``force`` (none of them is left behind):

- ``results/<arm>.json`` per arm, in the release's results shape with the metrics filled, each
  item extended with ``retrieval_rank`` and its ``verdict`` (the gate's, against the visible
  tests, in gated files; the full suite's in ungated ones); gated files also carry, per query, a
  ``gate`` object (abstained, latency, sandbox runs, cache hits, dropped items);
- ``summary.json``: the `Summary`;
- ``report.md`` and ``report.html`` (self-contained: plots are inline base64 PNGs, no external
  reference of any kind), both rendered from one list of blocks.

Names, ids, bug types and paths come from pools and results files: the blocks hold them as plain
text, and each renderer escapes every piece of text it writes (`guardrail.safetext`), so no pool
can add markup, HTML or escape sequences to a report. The JSON files are written with
`dumps_json`: any string, even a lone surrogate, is written and reads back unchanged.
"""

from __future__ import annotations

import base64
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardrail.safetext import dumps_json, html, markdown, one_line
from guardrail.verdict import Verdict
from guardrail_eval.metrics import compute_metrics, metric_keys, round_metrics
from guardrail_eval.outputs import replace_outputs
from guardrail_eval.pool import Pool, Query
from guardrail_eval.results import QueryResult, ResultsFile, TopResult
from guardrail_eval.runner import (
    Arm,
    EvalRun,
    EvalSettings,
    JudgedItem,
    QueryOutcome,
    visible_label,
)
from guardrail_eval.summary import ArmSummary, Interval, Summary, results_file_name

__all__ = [
    "render_html",
    "render_markdown",
    "results_file",
    "write_outputs",
]

SUMMARY_FILE = "summary.json"
MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
AGENT_ROWS = {
    "agent_buggy": "acted on buggy code",
    "agent_correct": "got correct code",
    "agent_nothing": "got nothing",
}


def write_outputs(
    run: EvalRun, summary: Summary, out_dir: Path, *, force: bool = False
) -> list[Path]:
    """Write every output file under ``out_dir`` (atomically, all or nothing); return them.

    With ``force`` an earlier run's outputs there are replaced (see `guardrail_eval.outputs`).

    Raises:
        OutFolderError: ``out_dir`` holds an earlier run's outputs (without ``force``) or
            files the eval does not write.
        OutputError: a file cannot be written.
    """
    files = {
        out_dir / results_file_name(arm): _json(results_file(arm, run.pool, run.settings))
        for arm in run.arms
    }
    files[out_dir / SUMMARY_FILE] = _json(summary)
    files[out_dir / MARKDOWN_FILE] = render_markdown(summary)
    files[out_dir / HTML_FILE] = render_html(summary)
    return replace_outputs(out_dir, files, force=force)


def _json(model: ResultsFile | Summary) -> str:
    return dumps_json(model.model_dump(mode="json")) + "\n"


def results_file(arm: Arm, pool: Pool, settings: EvalSettings) -> ResultsFile:
    """One arm in the release's ``results/<model>.json`` shape, extended with verdicts."""
    ks = list(settings.ks)
    extra: dict[str, Any] = {"system": arm.system, "pool": pool.name}
    if arm.gated:
        extra["gate"] = {
            "policy": settings.policy.value,
            "fetch_k": settings.fetch_k,
            "visible_tests": visible_label(arm.visible),
        }
    return ResultsFile(
        model=arm.name,
        n_queries=len(arm.outcomes),
        n_corpus=len(pool.corpus),
        ks=ks,
        metrics=round_metrics(compute_metrics(arm.ranked_queries(pool), ks)),
        per_query=[_query_result(pool, outcome, gated=arm.gated) for outcome in arm.outcomes],
        **extra,
    )


def _query_result(pool: Pool, outcome: QueryOutcome, *, gated: bool) -> QueryResult:
    query = outcome.query
    extra: dict[str, Any] = {}
    if gated and outcome.cost is not None:
        extra["gate"] = {
            "abstained": not outcome.items,
            "latency_s": round(outcome.cost.latency_s, 6),
            "sandbox_runs": outcome.cost.sandbox_runs,
            "cache_hits": outcome.cost.cache_hits,
            "dropped": [_item_row(pool, item, query) for item in outcome.dropped],
        }
    return QueryResult(
        query_id=query.query_id,
        query=query.query,
        correct_corpus_ids=list(query.correct_corpus_ids),
        top_results=[
            TopResult(rank=rank, **_item_row(pool, item, query))
            for rank, item in enumerate(outcome.items, start=1)
        ],
        **extra,
    )


def _test_results(truth: Verdict, query: Query) -> list[str]:
    """The per-test words of the ground-truth run; a candidate refused before anything ran (it
    defines nothing the tests call, say) errs on every test, as calling the name would in-process,
    so the row never reads as an empty, vacuously passing suite."""
    if truth.tests:
        return truth.outcomes
    return [f"ERROR:{truth.reason.value}"] * len(query.test_suite)


def _item_row(pool: Pool, item: JudgedItem, query: Query) -> dict[str, Any]:
    """A ranked item as a results-file row (without its ``rank``), with its verdict."""
    entry = pool.corpus[item.corpus_id]
    verdict = item.gate_verdict or item.truth
    return {
        "corpus_id": item.corpus_id,
        "label": entry.label,
        "bug_type": entry.bug_type or "",
        "similarity": round(item.score, 6),
        "passes_all_tests": item.passes_all_tests,
        "test_results": _test_results(item.truth, query),
        "retrieval_rank": item.retrieval_rank,
        "verdict": {
            "status": verdict.status.value,
            "reason": verdict.reason.value,
            "message": verdict.message,
            "alias": verdict.alias,
            "duration_s": round(verdict.duration_s, 6),
            "cached": verdict.cached,
            "failed_tests": verdict.failed_tests,
        },
    }


# --- the report as blocks, rendered to Markdown and HTML --------------------------------------


@dataclass(frozen=True)
class _Heading:
    level: int
    text: str


@dataclass(frozen=True)
class _Paragraph:
    text: str
    strong: bool = False


@dataclass(frozen=True)
class _Table:
    headers: list[str]
    rows: list[list[str]]


@dataclass(frozen=True)
class _Image:
    title: str
    png: bytes


_Block = _Heading | _Paragraph | _Table | _Image

PARAGRAPH_LIMIT = 4000
"""Cap of one paragraph or heading of a report (its own words plus names from the pool)."""
CELL_LIMIT = 1000
"""Cap of one table cell of a report."""
BUG_TYPES_SHOWN = 20
"""Bug types named in a report's cell or legend; the rest are counted together."""


def render_markdown(summary: Summary) -> str:
    """``report.md``: the report without its figures (they are in ``report.html``)."""
    lines: list[str] = []
    for block in _document(summary, figures=False):
        if isinstance(block, _Heading):
            lines += ["#" * block.level + " " + markdown(block.text, PARAGRAPH_LIMIT), ""]
        elif isinstance(block, _Paragraph):
            text = markdown(block.text, PARAGRAPH_LIMIT)
            lines += [f"**{text}**" if block.strong else text, ""]
        elif isinstance(block, _Table):
            lines.append(_markdown_row(block.headers))
            lines.append("|" + "---|" * len(block.headers))
            lines += [_markdown_row(row) for row in block.rows]
            lines.append("")
    return "\n".join(lines)


def _markdown_row(cells: list[str]) -> str:
    return "| " + " | ".join(markdown(cell, CELL_LIMIT) for cell in cells) + " |"


def render_html(summary: Summary) -> str:
    """``report.html``: one self-contained page; figures are inline ``data:`` PNGs."""
    body: list[str] = []
    for block in _document(summary, figures=True):
        if isinstance(block, _Heading):
            text = html(one_line(block.text, PARAGRAPH_LIMIT))
            body.append(f"<h{block.level}>{text}</h{block.level}>")
        elif isinstance(block, _Paragraph):
            text = html(one_line(block.text, PARAGRAPH_LIMIT))
            body.append(f"<p><strong>{text}</strong></p>" if block.strong else f"<p>{text}</p>")
        elif isinstance(block, _Table):
            head = "".join(f"<th>{html(one_line(cell, CELL_LIMIT))}</th>" for cell in block.headers)
            rows = "".join(
                "<tr>"
                + "".join(f"<td>{html(one_line(cell, CELL_LIMIT))}</td>" for cell in row)
                + "</tr>"
                for row in block.rows
            )
            body.append(f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
        else:
            data = base64.b64encode(block.png).decode("ascii")
            alt = html(one_line(block.title))
            body.append(
                f'<figure><img alt="{alt}" src="data:image/png;base64,{data}">'
                f"<figcaption>{alt}</figcaption></figure>"
            )
    title = html(one_line(f"guardrail eval: {summary.pool.name}"))
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{title}</title><style>{_CSS}</style></head>\n<body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:72em;margin:2em auto;padding:0 1em;"
    "color:#222}table{border-collapse:collapse;margin:1em 0;font-size:.9em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right}"
    "th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}"
    "figure{margin:1em 0}img{max-width:100%}figcaption{color:#666;font-size:.85em}"
)


def _document(summary: Summary, *, figures: bool) -> list[_Block]:
    pool, settings = summary.pool, summary.settings
    blocks: list[_Block] = [_Heading(1, f"guardrail eval: {pool.name}")]
    blocks += [_Paragraph(headline.text, strong=True) for headline in summary.headlines]
    faults = summary.faults
    if faults.incomplete:
        blocks.append(_Paragraph(f"Results incomplete: {faults.describe()}.", strong=True))
    blocks.append(
        _Paragraph(
            f"Pool {pool.name} ({pool.source or 'built in code'}): {pool.n_queries} queries,"
            f" {pool.n_corpus} snippets. The gate verifies each system's top {settings.fetch_k}"
            f" with policy {settings.policy}; visible tests: {', '.join(settings.visible_tests)}."
        )
    )
    if figures:
        from guardrail_eval.plots import exec_at_k_plot, gate_latency_plot, miss_sources_plot

        blocks += [
            _Image("exec@k, ungated vs gated", exec_at_k_plot(summary)),
            _Image("Rank-1 misses by bug type", miss_sources_plot(summary)),
            _Image("Gate latency per query", gate_latency_plot(summary)),
        ]
    else:
        blocks.append(_Paragraph("Plots: see report.html."))
    for system in dict.fromkeys(arm.system for arm in summary.arms):
        blocks += _system_blocks(summary, [arm for arm in summary.arms if arm.system == system])
    blocks += _method_blocks(summary)
    return blocks


def _system_blocks(summary: Summary, arms: list[ArmSummary]) -> list[_Block]:
    ungated, gated = arms[0], arms[1:]
    headers = ["metric", *(arm.name for arm in arms), *(f"Δ {arm.name}" for arm in gated)]
    rows = []
    for key in [*metric_keys(summary.settings.ks), *AGENT_ROWS]:
        row = [AGENT_ROWS.get(key, key)]
        row += [_with_interval(arm.intervals[key]) for arm in arms]
        row += [
            _with_interval(arm.vs_ungated.difference[key], signed=True)
            for arm in gated
            if arm.vs_ungated is not None
        ]
        rows.append(row)
    blocks: list[_Block] = [
        _Heading(2, ungated.system),
        _Paragraph(f"{ungated.n_queries} queries. Means with 95% bootstrap intervals."),
        _Table(headers, rows),
    ]
    for arm in gated:
        if arm.vs_ungated is None:
            continue
        tests = [arm.vs_ungated.mcnemar_exec_at_1, arm.vs_ungated.mcnemar_acted_on_buggy]
        blocks.append(
            _Paragraph(
                f"McNemar exact, {ungated.name} vs {arm.name}: "
                + "; ".join(
                    f"{test.outcome}: ungated only {test.ungated_only}, gated only"
                    f" {test.gated_only}, p = {test.p_value:.4g}"
                    for test in tests
                )
            )
        )
    blocks.append(
        _Table(
            ["arm", "rank-1 misses", "own paired distractor", "by bug type"],
            [
                [
                    arm.name,
                    str(arm.rank1_misses.n_misses),
                    _share(arm.rank1_misses.paired_share),
                    _bug_type_counts(arm.rank1_misses.by_bug_type),
                ]
                for arm in arms
            ],
        )
    )
    below = ungated.canonical_below
    if below is not None and below.share is not None and below.interval is not None:
        blocks.append(
            _Paragraph(
                f"Canonical scored below one of its paired distractors: {below.share:.1%}"
                f" ({below.n_below} of {below.n_scored} queries;"
                f" 95% interval {below.interval.low:.1%} to {below.interval.high:.1%})."
            )
        )
    else:
        blocks.append(_Paragraph("Canonical below a distractor: not known (no scores)."))
    cost_rows = [
        [
            arm.name,
            f"{cost.latency_p50_ms:.1f}",
            f"{cost.latency_p95_ms:.1f}",
            f"{cost.latency_mean_ms:.1f}",
            str(cost.sandbox_runs),
            str(cost.cache_hits),
            str(cost.abstained),
            str(cost.queries_with_hidden_tests),
        ]
        for arm in gated
        if (cost := arm.gate_cost) is not None
    ]
    headers = ["arm", "p50 ms", "p95 ms", "mean ms", "sandbox runs", "cache hits"]
    blocks.append(_Table([*headers, "nothing handed over", "queries with hidden tests"], cost_rows))
    return blocks


def _method_blocks(summary: Summary) -> list[_Block]:
    bootstrap = summary.bootstrap
    optional = "; ".join(f"{name}: {state}" for name, state in summary.pool.optional_files.items())
    timings = ", ".join(f"{key} {value:.1f}" for key, value in summary.timings_s.items())
    return [
        _Heading(2, "Method"),
        _Paragraph(f"Ground truth: {summary.ground_truth}."),
        _Paragraph(
            f"Bootstrap: {bootstrap['resamples']} resamples, seed {bootstrap['seed']},"
            f" {bootstrap['interval']}; {bootstrap['generator']}; {bootstrap['paired']}."
            " McNemar: two-sided exact binomial test on the discordant queries."
        ),
        _Paragraph(f"Optional pool files: {optional}."),
        _Paragraph(
            f"Sandbox {summary.sandbox}; verdict cache {summary.cache};"
            f" {summary.verifications} verifications, {summary.sandbox_runs} sandbox runs;"
            f" {summary.faults.retried} re-run after a sandbox fault or starved timeout,"
            f" {summary.faults.remaining} still faults (listed in summary.json)."
        ),
        _Paragraph(f"Timings (s): {timings}."),
        *([_Paragraph(summary.validation.describe())] if summary.validation else []),
    ]


def _bug_type_counts(by_bug_type: dict[str, int]) -> str:
    """``off_by_one 2, wrong_operator 1``: the most frequent bug types, each name capped."""
    ranked = sorted(by_bug_type.items(), key=lambda pair: -pair[1])
    named = [f"{one_line(bug, 60)} {count}" for bug, count in ranked[:BUG_TYPES_SHOWN]]
    rest = ranked[BUG_TYPES_SHOWN:]
    if rest:
        named.append(f"{len(rest)} other bug types {sum(count for _, count in rest)}")
    return ", ".join(named) or "-"


def _with_interval(interval: Interval, *, signed: bool = False) -> str:
    number = "{:+.4f}" if signed else "{:.4f}"
    return (
        number.format(interval.estimate)
        + f" [{number.format(interval.low)}, {number.format(interval.high)}]"
    )


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
