"""The eval's output folder: results files, ``summary.json``, ``report.md``, ``report.html``.

`write_outputs` renders everything in memory and then writes all files at once
(`guardrail_eval.outputs.replace_outputs`), so a failure leaves no half-written output behind,
and an earlier run's outputs are replaced only with ``force`` (none of them is left behind):

- ``results/<arm>.json`` per arm (`guardrail_eval.arms` names them), in the release's results
  shape with the metrics filled, each item extended with ``retrieval_rank`` and its ``verdict``
  (the gate's, against the visible tests, in gated files; the full suite's otherwise); gated
  files also carry, per query, a ``gate`` object (abstained, latency, sandbox runs, cache hits,
  dropped items). An arm with several draws holds one ``per_query`` entry per (draw, query),
  draw-major, each with its ``draw`` and the indices of its ``visible_tests``; its ``metrics``,
  the mean over all entries, are the mean over draws, as in ``summary.json``;
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

from guardrail.safetext import dumps_json, html, markdown, one_line
from guardrail_eval.captions import arm_captions
from guardrail_eval.metrics import metric_keys
from guardrail_eval.outputs import replace_outputs
from guardrail_eval.rankings import results_file
from guardrail_eval.results import ResultsFile
from guardrail_eval.runner import EvalRun
from guardrail_eval.summary import ArmSummary, Interval, Summary, results_file_name

__all__ = [
    "render_html",
    "render_markdown",
    "write_outputs",
]

SUMMARY_FILE = "summary.json"
MARKDOWN_FILE = "report.md"
HTML_FILE = "report.html"
AGENT_ROWS = {
    "agent_correct": "acted on correct code",
    "agent_buggy": "acted on buggy code",
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
            body.append(
                f'<div class="wide"><table><thead><tr>{head}</tr></thead>'
                f"<tbody>{rows}</tbody></table></div>"
            )
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


# Nothing runs off the page: a table wider than the page scrolls inside its own box (never the
# page), and a long unbroken word (an arm or bug-type name from a pool) wraps wherever needed.
_CSS = (
    "body{font-family:system-ui,sans-serif;max-width:72em;margin:2em auto;padding:0 1em;"
    "color:#222;overflow-wrap:anywhere}"
    ".wide{max-width:100%;overflow-x:auto}"
    "table{border-collapse:collapse;margin:1em 0;font-size:.9em}"
    "th,td{border:1px solid #ccc;padding:.25em .6em;text-align:right;overflow-wrap:anywhere}"
    "th:first-child,td:first-child{text-align:left}th{background:#f3f3f3}"
    "figure{margin:1em 0;max-width:100%}img{max-width:100%;height:auto}"
    "figcaption{color:#666;font-size:.85em}"
)


def _document(summary: Summary, *, figures: bool) -> list[_Block]:
    pool, settings = summary.pool, summary.settings
    blocks: list[_Block] = [_Heading(1, f"guardrail eval: {pool.name}")]
    for headline in summary.headlines:
        blocks.append(_Paragraph(_flat(headline.text), strong=True))
        if headline.upper_bounds is not None:
            blocks.append(_Paragraph(_flat(headline.upper_bounds)))
    faults = summary.faults
    if faults.incomplete:
        blocks.append(_Paragraph(f"Results incomplete: {faults.describe()}.", strong=True))
    visible = ", ".join(str(n) for n in settings.visible_tests)
    blocks.append(
        _Paragraph(
            f"Pool {pool.name} ({pool.source or 'built in code'}): {pool.n_queries} queries,"
            f" {pool.n_corpus} snippets. The gate verifies each system's top {settings.fetch_k}"
            f" with policy {settings.policy}. Visible tests: {visible} drawn at random per query,"
            f" {settings.draws} seeded draws (seed {settings.seed}); a visible arm's figures are"
            " means over its draws."
        )
    )
    blocks += [_Paragraph(text) for text in arm_captions(summary)]
    if figures:
        from guardrail_eval.plots import (
            agent_outcomes_plot,
            exec_at_k_plot,
            gate_latency_plot,
            miss_sources_plot,
            sweep_plot,
        )

        blocks += [
            _Image("What the agent acted on, per arm", agent_outcomes_plot(summary)),
            _Image("exec@k per arm (95% intervals)", exec_at_k_plot(summary)),
            _Image("Rank-1 misses by bug type", miss_sources_plot(summary)),
            _Image("Gate latency per query (cache hits labelled)", gate_latency_plot(summary)),
        ]
        if summary.sweep:
            blocks.append(_Image("exec@1 and acted on buggy vs visible tests", sweep_plot(summary)))
    else:
        blocks.append(_Paragraph("Plots: see report.html."))
    for system in dict.fromkeys(arm.system for arm in summary.arms):
        blocks += _system_blocks(summary, [arm for arm in summary.arms if arm.system == system])
    if summary.sweep:
        blocks += _sweep_blocks(summary)
    blocks += _method_blocks(summary)
    return blocks


def _system_blocks(summary: Summary, arms: list[ArmSummary]) -> list[_Block]:
    ungated, others = arms[0], arms[1:]
    rows = []
    for key in [*AGENT_ROWS, *metric_keys(summary.settings.ks)]:
        cells = [_with_interval(arm.intervals[key]) for arm in arms]
        rows.append([AGENT_ROWS.get(key, key), *cells])
        if key == "agent_nothing":
            rows += _asking_rows(arms)
    blocks: list[_Block] = [
        _Heading(2, ungated.system),
        _Paragraph(
            f"{ungated.n_queries} queries. Means (over draws where an arm has several) with 95%"
            " bootstrap intervals over queries."
        ),
        _Table(["metric", *(arm.name for arm in arms)], rows),
    ]
    diff_rows = []
    for arm in others:
        if arm.vs_ungated is None:
            continue
        diff = arm.vs_ungated.difference
        tests = [arm.vs_ungated.mcnemar_exec_at_1, arm.vs_ungated.mcnemar_acted_on_buggy]
        diff_rows.append(
            [
                arm.name,
                _with_interval(diff["agent_correct"], signed=True),
                _with_interval(diff["agent_buggy"], signed=True),
                *(_NO_TEST[arm.kind] if test is None else f"{test.p_value:.4g}" for test in tests),
            ]
        )
    headers = ["arm", "Δ acted on correct", "Δ acted on buggy", "McNemar p, exec@1"]
    blocks.append(_Table([*headers, "McNemar p, acted on buggy"], diff_rows))
    blocks += _versus_blocks(summary, ungated.system)
    spread = [arm for arm in arms if arm.draw_means is not None]
    if spread:
        blocks.append(
            _Table(
                ["arm", "exec@1 per draw", "acted on buggy per draw"],
                [
                    [arm.name, _numbers(means["exec@1"]), _numbers(means["agent_buggy"])]
                    for arm in spread
                    if (means := arm.draw_means) is not None
                ],
            )
        )
    blocks.append(
        _Table(
            ["arm", "rank-1 misses (per draw)", "own paired distractor", "by bug type"],
            [
                [
                    arm.name,
                    f"{arm.rank1_misses.n_misses:g}",
                    _share(arm.rank1_misses.paired_share),
                    _bug_type_counts(arm.rank1_misses.by_bug_type),
                ]
                for arm in arms
            ],
        )
    )
    blocks += _score_blocks(ungated)
    cost_rows = [
        [
            arm.name,
            f"{cost.latency_p50_ms:.1f}",
            f"{cost.latency_p95_ms:.1f}",
            f"{cost.latency_mean_ms:.1f}",
            str(cost.sandbox_runs),
            f"{cost.cache_hits} of {cost.verdicts}",
            str(cost.abstained),
            str(cost.queries_with_hidden_tests),
        ]
        for arm in others
        if (cost := arm.gate_cost) is not None
    ]
    headers = ["arm (gate calls: queries x draws)", "p50 ms", "p95 ms", "mean ms", "sandbox runs"]
    blocks.append(
        _Table(
            [*headers, "cache hits", "nothing handed over", "calls with hidden tests"], cost_rows
        )
    )
    return blocks


_NO_TEST = {
    "upper-bound": "none (a ceiling)",
    "visible": "none (mean of draws)",
    "consensus": "none (mean of draws)",
    "agree": "none (mean of draws)",
    "noisy-ask": "none (mean of draws)",
    "oracle-ask": "none (mean of draws)",
}


def _versus_blocks(summary: Summary, system: str) -> list[_Block]:
    """The gate's best honest arm against the best shortcut, with the sign test's p."""
    found = [h.versus_shortcut for h in summary.headlines if h.system == system]
    if not found or found[0] is None:
        return []
    versus = found[0]
    return [
        _Table(
            [
                "gate (best honest arm)",
                "acted on correct",
                "best shortcut",
                "acted on correct",
                "queries gate / shortcut / tie",
                "sign test p",
            ],
            [
                [
                    versus.gate_arm,
                    f"{versus.gate_correct:.1%}",
                    versus.shortcut,
                    f"{versus.shortcut_correct:.1%}",
                    f"{versus.gate_higher} / {versus.shortcut_higher} / {versus.ties}",
                    f"{versus.p_value:.4g}",
                ]
            ],
        )
    ]


def _asking_rows(arms: list[ArmSummary]) -> list[list[str]]:
    """Silent buggy and questions asked, for the arms whose gate asked ("-" for the rest)."""
    if all(arm.asking is None for arm in arms):
        return []
    return [
        [
            "silent buggy (no question raised)",
            *(_with_interval(a.asking.silent_buggy) if a.asking else "-" for a in arms),
        ],
        [
            "questions asked per query",
            *(f"{a.asking.questions_mean:.2f}" if a.asking else "-" for a in arms),
        ],
        [
            "hidden-test question (of queries asked)",
            *(_share(a.asking.hidden_probe) if a.asking else "-" for a in arms),
        ],
        [
            "wrong answers per query",
            *(_number(a.asking.wrong_answers_mean) if a.asking else "-" for a in arms),
        ],
    ]


def _score_blocks(ungated: ArmSummary) -> list[_Block]:
    """Canonical-below-a-distractor and the ties of the retriever's scores."""
    below, ties = ungated.canonical_below, ungated.ties
    if below is None or below.share is None or below.interval is None:
        return [_Paragraph("Canonical below a distractor, ties: not known (no scores).")]
    blocks: list[_Block] = [
        _Paragraph(
            f"Canonical scored below one of its paired distractors: {below.share:.1%}"
            f" ({below.n_below} of {below.n_scored} queries;"
            f" 95% interval {below.interval.low:.1%} to {below.interval.high:.1%})."
        )
    ]
    if ties is not None:
        blocks.append(
            _Paragraph(
                f"Ties ({ties.rule}): rank 1 tied with rank 2 in {ties.rank1_tied} of"
                f" {ungated.n_queries} queries; a canonical tied with one of its distractors in"
                f" {ties.canonical_tied} of {ties.n_scored}."
            )
        )
    return blocks


def _sweep_blocks(summary: Summary) -> list[_Block]:
    rows = [
        [
            arm.name,
            arm.visible_tests or "-",
            _with_interval(arm.intervals["exec@1"]),
            _with_interval(arm.intervals["agent_buggy"]),
            _with_interval(arm.intervals["agent_nothing"]),
        ]
        for arm in summary.sweep
    ]
    return [
        _Heading(2, "Sweep: 1..N visible tests"),
        _Paragraph(
            "Each row gates with n random tests per query and draw (a query with fewer tests"
            " shows them all)."
        ),
        _Table(["arm", "visible", "exec@1", "acted on buggy", "got nothing"], rows),
    ]


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


def _bug_type_counts(by_bug_type: dict[str, float]) -> str:
    """``off_by_one 2, wrong_operator 1.4``: the most frequent bug types (per draw), each name
    capped."""
    ranked = sorted(by_bug_type.items(), key=lambda pair: -pair[1])
    named = [f"{one_line(bug, 60)} {count:g}" for bug, count in ranked[:BUG_TYPES_SHOWN]]
    rest = ranked[BUG_TYPES_SHOWN:]
    if rest:
        named.append(f"{len(rest)} other bug types {sum(count for _, count in rest):g}")
    return ", ".join(named) or "-"


def _with_interval(interval: Interval, *, signed: bool = False) -> str:
    number = "{:+.4f}" if signed else "{:.4f}"
    return (
        number.format(interval.estimate)
        + f" [{number.format(interval.low)}, {number.format(interval.high)}]"
    )


def _flat(text: str) -> str:
    """A headline's wrapped lines as one paragraph."""
    return " ".join(line.strip() for line in text.splitlines())


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def _numbers(values: list[float]) -> str:
    return ", ".join(f"{value:.3f}" for value in values)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.1%}"
