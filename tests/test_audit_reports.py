"""Audit reports from findings as data: severity grading, fingerprints, SARIF 2.1.0 (validated
against the OASIS schema vendored in ``tests/schemas/``), HTML with hostile text escaped.

The findings here are built by hand (pure data, no sandbox); ``test_audit_run.py`` produces real
ones in the sandbox and validates their SARIF the same way.
"""

from __future__ import annotations

import json

import jsonschema
import pytest
from sarif_check import validate_sarif

from guardrail.audit import (
    AuditCounts,
    AuditReport,
    Finding,
    NotCompared,
    Outcome,
    Place,
    ProbeInput,
    Rule,
    Severity,
    Site,
    to_html,
    to_sarif,
)
from guardrail.audit.findings import TestStatus, fingerprint, grade


def _site(
    name: str, module: str, *, line: int = 10, tests: TestStatus = "none", text: str = "1"
) -> Site:
    return Site(
        id=f"id-{module}-{name}",
        file=module.replace(".", "/") + ".py",
        root="/src",
        module=module,
        qualified_name=name,
        line=line,
        end_line=line + 5,
        tests=tests,
        output=Outcome(kind="value", text=text),
    )


def _finding(left: Site, right: Site, origin: str = "doctest") -> Finding:
    rule = (
        Rule.DIVERGES_ON_TESTED_INPUT if origin == "doctest" else Rule.DIVERGES_ON_GENERATED_INPUT
    )
    return Finding(
        rule=rule,
        severity=grade(origin, left, right),
        fingerprint=fingerprint(rule, left, right),
        left=left,
        right=right,
        token_similarity=0.97,
        embedding_similarity=0.993,
        input=ProbeInput(args=("1", "'ABC'"), kwargs={"default": "None"}, origin=origin),
        diverging_inputs=2,
        inputs_tried=12,
    )


def _report(*findings: Finding) -> AuditReport:
    counts = AuditCounts(
        snippets=45,
        compared=43,
        candidate_pairs=5,
        confirmed_pairs=5,
        clusters=5,
        pairs_run=4,
        pairs_not_run={"method": 1},
        sandbox_runs=60,
        inputs_tried=30,
    )
    return AuditReport(target="src", counts=counts, findings=findings, seconds={"run": 1.0})


@pytest.mark.parametrize(
    ("origin", "left_tests", "right_tests", "right_kind", "expected"),
    [
        ("doctest", "pass", "fail", "value", Severity.HIGH),
        ("test", "pass", "none", "value", Severity.HIGH),  # tested input, one side passes
        ("mutation", "pass", "fail", "value", Severity.HIGH),  # one passes, the other fails
        ("doctest", "none", "none", "value", Severity.MEDIUM),
        ("mutation", "pass", "none", "value", Severity.MEDIUM),
        ("type-hint", "none", "none", "raises", Severity.MEDIUM),
        ("mutation", "none", "unjudged", "value", Severity.LOW),
        ("guess", "none", "none", "raises", Severity.LOW),  # nothing said what it takes
        ("guess", "pass", "none", "value", Severity.LOW),
        ("guess", "pass", "fail", "value", Severity.HIGH),  # its own tests still decide
    ],
)
def test_severity_is_graded_by_evidence(
    origin: str,
    left_tests: TestStatus,
    right_tests: TestStatus,
    right_kind: str,
    expected: Severity,
) -> None:
    left = _site("f", "a", tests=left_tests)
    right = _site("f", "b", tests=right_tests).model_copy(
        update={"output": Outcome(kind=right_kind, text="ValueError")}  # type: ignore[arg-type]
    )
    assert grade(origin, left, right) is expected


def test_fingerprints_ignore_lines_roots_order_and_inputs_but_not_functions() -> None:
    left, right = _site("nth", "lib.core"), _site("nth", "lib.vendored")
    moved = left.model_copy(update={"line": 300, "root": "/elsewhere"})
    rule = Rule.DIVERGES_ON_TESTED_INPUT

    assert fingerprint(rule, left, right) == fingerprint(rule, right, moved)
    assert fingerprint(rule, left, right) != fingerprint(rule, left, _site("nth", "lib.other"))
    assert fingerprint(rule, left, right) != fingerprint(
        Rule.DIVERGES_ON_GENERATED_INPUT, left, right
    )


def test_sarif_validates_and_carries_levels_fingerprints_and_severity() -> None:
    high = _finding(
        _site("nth", "lib.core", tests="pass"), _site("nth", "lib.vendored", tests="fail")
    )
    low = _finding(_site("g", "lib.core"), _site("g", "lib.vendored"), origin="mutation")
    log = to_sarif(_report(high, low), tool_version="0.1.0")

    validate_sarif(log)
    (run,) = log["runs"]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == ["GRA001", "GRA002"]
    results = run["results"]
    assert [r["level"] for r in results] == ["error", "note"]  # graded, not all warnings
    assert [r["properties"]["security-severity"] for r in results] == ["7.5", "2.0"]
    assert results[0]["partialFingerprints"] == {"guardrailNearClone/v1": high.fingerprint}
    where = results[0]["locations"][0]["physicalLocation"]
    assert where["artifactLocation"] == {"uri": "lib/core.py", "uriBaseId": "%SRCROOT%"}
    assert where["region"] == {"startLine": 10, "endLine": 15}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///src/"
    assert results[0]["properties"]["input"] == {
        "args": ["1", "'ABC'"],
        "kwargs": {"default": "None"},
        "origin": "doctest",
    }


def test_sarif_of_a_clean_audit_validates() -> None:
    log = to_sarif(_report(), tool_version="0.1.0")
    validate_sarif(log)
    assert log["runs"][0]["results"] == []


def test_the_validator_rejects_a_broken_log() -> None:
    """The schema check is real: a result without a message is not SARIF."""
    finding = _finding(_site("f", "a"), _site("f", "b"))
    log = to_sarif(_report(finding), tool_version="0.1.0")
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        validate_sarif(log)


HOSTILE = "<script>alert(1)</script>\x1b]0;owned\x07 [bold]x[/]"


def test_html_escapes_text_from_the_audited_code() -> None:
    left = _site(HOSTILE, "a", text=HOSTILE)
    page = to_html(_report(_finding(left, _site("f", "b"))))

    assert "<script>" not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "\x1b" not in page
    assert "\x07" not in page
    assert page.count("<table>") == 1


def test_json_report_has_sides_inputs_and_outputs() -> None:
    finding = _finding(_site("nth", "lib.core", tests="pass"), _site("nth", "lib.vendored"))
    data = json.loads(json.dumps(_report(finding).model_dump(mode="json")))
    (row,) = data["findings"]
    assert {key: row["left"][key] for key in ("file", "qualified_name", "line")} == {
        "file": "lib/core.py",
        "qualified_name": "nth",
        "line": 10,
    }
    assert row["input"] == {
        "args": ["1", "'ABC'"],
        "kwargs": {"default": "None"},
        "origin": "doctest",
    }
    assert row["left"]["output"] == {"kind": "value", "text": "1"}
    assert row["severity"] == "high"


def test_pairs_not_compared_are_in_every_report_escaped() -> None:
    hostile = "<script>alert(1)</script>"
    left = _site("Account.statement", "lib.one")
    right = _site(hostile, "lib.two")
    places = [Place(**side.model_dump(exclude={"tests", "output"})) for side in (left, right)]
    pair = NotCompared(
        left=places[0],
        right=places[1],
        category="not-observed",
        reason=f"its class cannot be built without arguments ({hostile})",
        token_similarity=0.9,
        embedding_similarity=None,
    )
    report = _report().model_copy(update={"not_compared": (pair,)})
    sarif = to_sarif(report, tool_version="0.0.1")
    validate_sarif(sarif)
    (note,) = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert note["descriptor"]["id"] == "GRA900" and note["level"] == "note"
    assert "were not compared: its class cannot be built" in note["message"]["text"]
    assert [loc["id"] for loc in note["locations"]] == [0, 1]
    page = to_html(report)
    assert hostile not in page and "&lt;script&gt;" in page
    assert "not compared: its class cannot be built without arguments" in page
    assert AuditReport.model_validate_json(report.model_dump_json()) == report
