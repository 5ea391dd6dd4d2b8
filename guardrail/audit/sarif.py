"""SARIF 2.1.0 for audit findings: what code-scanning services (GitHub, GitLab, IDEs) read.

* one rule per kind of finding (`guardrail.audit.findings.RULES`), with a stable ``ruleId``;
* ``level`` graded from the severity (high: ``error``, medium: ``warning``, low: ``note``) and
  ``properties.security-severity`` (GitHub's 0-10 score), so not every finding is a warning;
* ``partialFingerprints`` carry `Finding.fingerprint`, which survives moved lines, another
  checkout and another diverging input: a finding keeps its identity across runs;
* the location is the left function, the near-clone a ``relatedLocations`` entry;
* a near-clone pair that could not be compared is no result (nothing was found wrong) but a
  ``toolExecutionNotifications`` entry of the run's invocation (descriptor ``GRA900``, level
  ``note``), with both functions' locations and the reason: never a silent "same";
  URIs are relative to ``%SRCROOT%`` (the tree's root) when the snippet's file is relative.

Messages are plain text (SARIF ``text``, never ``markdown``), escaped by `guardrail.safetext`.
"""

from __future__ import annotations

from typing import Any

from guardrail.audit.findings import RULES, AuditReport, Finding, NotCompared, Place, Site
from guardrail.safetext import clean

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "to_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = (
    "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
)
FINGERPRINT_KEY = "guardrailNearClone/v1"
_SRCROOT = "%SRCROOT%"
NOT_COMPARED_ID = "GRA900"


def to_sarif(report: AuditReport, *, tool_version: str) -> dict[str, Any]:
    """The SARIF log (a JSON-ready dict) of ``report``."""
    rules = list(RULES)
    places: list[Place] = [side for f in report.findings for side in (f.left, f.right)]
    places += [side for pair in report.not_compared for side in (pair.left, pair.right)]
    roots = sorted({place.root for place in places if place.root})
    run: dict[str, Any] = {
        "tool": {
            "driver": {
                "name": "guardrail audit",
                "informationUri": "https://github.com/guardrail-exec/guardrail",
                "version": tool_version,
                "rules": [_rule(rule) for rule in rules],
            }
        },
        "results": [_result(finding, rules.index(finding.rule)) for finding in report.findings],
        "invocations": [
            {
                "executionSuccessful": True,
                "toolExecutionNotifications": [_notification(p) for p in report.not_compared],
            }
        ],
        "columnKind": "unicodeCodePoints",
    }
    if len(roots) == 1:
        run["originalUriBaseIds"] = {_SRCROOT: {"uri": _folder_uri(roots[0])}}
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _rule(rule: Any) -> dict[str, Any]:
    info = RULES[rule]
    return {
        "id": rule.value,
        "name": info.name,
        "shortDescription": {"text": info.short},
        "fullDescription": {"text": info.full},
        "defaultConfiguration": {"level": "warning"},
        "properties": {"tags": ["correctness", "near-clone", "differential-testing"]},
    }


def _result(finding: Finding, rule_index: int) -> dict[str, Any]:
    return {
        "ruleId": finding.rule.value,
        "ruleIndex": rule_index,
        "level": finding.severity.sarif_level,
        "message": {"text": clean(finding.message)},
        "locations": [_location(finding.left, 0)],
        "relatedLocations": [_location(finding.right, 1)],
        "partialFingerprints": {FINGERPRINT_KEY: finding.fingerprint},
        "properties": {
            "security-severity": finding.severity.security_severity,
            "severity": finding.severity.value,
            "input": {
                "args": list(finding.input.args),
                "kwargs": dict(finding.input.kwargs),
                "origin": finding.input.origin,
            },
            "left": _side(finding.left),
            "right": _side(finding.right),
            "tokenSimilarity": finding.token_similarity,
            "embeddingSimilarity": finding.embedding_similarity,
        },
    }


def _notification(pair: NotCompared) -> dict[str, Any]:
    return {
        "descriptor": {"id": NOT_COMPARED_ID},
        "level": "note",
        "message": {"text": clean(pair.message)},
        "locations": [_location(pair.left, 0), _location(pair.right, 1)],
        "properties": {"category": pair.category, "reason": clean(pair.reason)},
    }


def _location(site: Place, index: int) -> dict[str, Any]:
    physical: dict[str, Any] = {"artifactLocation": _artifact(site)}
    if site.line > 0:
        physical["region"] = {"startLine": site.line, "endLine": max(site.end_line, site.line)}
    return {
        "id": index,
        "physicalLocation": physical,
        "logicalLocations": [
            {
                "name": clean(site.qualified_name.rpartition(".")[2], 200),
                "fullyQualifiedName": clean(f"{site.module}.{site.qualified_name}", 400)
                if site.module
                else clean(site.qualified_name, 400),
                "kind": "function",
            }
        ],
        "message": {"text": clean(_said(site))},
    }


def _said(place: Place) -> str:
    if isinstance(place, Site):
        return f"{place.qualified_name} ({place.tests} on its own tests)"
    return place.qualified_name


def _artifact(site: Place) -> dict[str, Any]:
    if site.root and not site.file.startswith("/"):
        return {"uri": _quote(site.file), "uriBaseId": _SRCROOT}
    return {"uri": _file_uri(site.file)}


def _side(site: Site) -> dict[str, Any]:
    return {"tests": site.tests, "kind": site.output.kind, "output": site.output.text}


def _quote(path: str) -> str:
    from urllib.parse import quote

    return quote(path, safe="/")


def _folder_uri(path: str) -> str:
    uri = _file_uri(path)
    return uri if uri.endswith("/") else uri + "/"


def _file_uri(path: str) -> str:
    from pathlib import PurePosixPath

    return "file://" + _quote(PurePosixPath(path).as_posix())
