"""A self-contained HTML page of an audit: one table, no scripts, no external resources.

Every string from the audited code or the index (names, files, values, exception names) is
data: escaped with `guardrail.safetext.html`, never markup.
"""

from __future__ import annotations

from guardrail.audit.findings import AuditReport, Finding, NotCompared, Place, Site
from guardrail.safetext import html

__all__ = ["to_html"]

_STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:2em;color:#222}
table{border-collapse:collapse;width:100%}td,th{border:1px solid #ccc;padding:4px 6px;
vertical-align:top;text-align:left}code,pre{font:12px ui-monospace,monospace;white-space:pre-wrap;
margin:0}.high{background:#fdd}.medium{background:#ffe9c7}.low{background:#eef}
"""


def to_html(report: AuditReport) -> str:
    """The page, as text."""
    counts = report.counts
    rows = "\n".join(_row(finding) for finding in report.findings) or (
        '<tr><td colspan="6">no near-clones behave differently</td></tr>'
    )
    summary = (
        f"{counts.snippets} snippets, {counts.candidate_pairs} candidate pairs,"
        f" {counts.confirmed_pairs} near-clone pairs in {counts.clusters} clusters,"
        f" {counts.pairs_run} pairs run, {counts.sandbox_runs} sandbox runs:"
        f" {len(report.findings)} findings, {len(report.not_compared)} pairs not compared"
    )
    unpaired = "\n".join(_not_compared_row(pair) for pair in report.not_compared)
    not_compared = (
        "<h2>Not compared</h2><table><thead><tr><th>left</th><th>right</th>"
        f"<th>not compared: reason</th></tr></thead><tbody>\n{unpaired}\n</tbody></table>"
        if report.not_compared
        else ""
    )
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\';'
        " style-src 'unsafe-inline'\">"
        f"<title>guardrail audit: {html(report.target, 300)}</title><style>{_STYLE}</style>"
        f"</head><body><h1>guardrail audit: {html(report.target, 300)}</h1>"
        f"<p>{html(summary)}</p><table><thead><tr><th>severity</th><th>rule</th>"
        "<th>left</th><th>right</th><th>input</th><th>similarity</th></tr></thead><tbody>\n"
        f"{rows}\n</tbody></table>{not_compared}</body></html>\n"
    )


def _row(finding: Finding) -> str:
    severity = finding.severity.value
    similarity = ", ".join(
        f"{label} {value:.3f}"
        for label, value in (
            ("tokens", finding.token_similarity),
            ("embedding", finding.embedding_similarity),
        )
        if value is not None
    )
    call = finding.input.call(finding.left.qualified_name)
    return (
        f'<tr class="{severity}"><td>{severity}</td><td>{finding.rule.value}<br>'
        f"<small>{finding.fingerprint[:16]}</small></td>"
        f"<td>{_side(finding.left)}</td><td>{_side(finding.right)}</td>"
        f"<td><code>{html(call, 1000)}</code><br><small>from {html(finding.input.origin, 40)};"
        f" {finding.diverging_inputs} of {finding.inputs_tried} inputs differ</small></td>"
        f"<td>{html(similarity)}</td></tr>"
    )


def _not_compared_row(pair: NotCompared) -> str:
    return (
        f"<tr><td>{_place(pair.left)}</td><td>{_place(pair.right)}</td>"
        f"<td>not compared: {html(pair.reason, 1000)}</td></tr>"
    )


def _place(place: Place, tests: str = "") -> str:
    return (
        f"<code>{html(place.qualified_name, 300)}</code><br>"
        f"<small>{html(place.file, 300)}:{place.line}{tests}</small>"
    )


def _side(site: Site) -> str:
    verbs = {"raises": "raises", "yields": "returns an iterator yielding"}
    verb = verbs.get(site.output.kind, "returns")
    return (
        f"{_place(site, f' (own tests: {site.tests})')}<br>"
        f"{verb} <pre>{html(site.output.text, 1000)}</pre>"
    )
