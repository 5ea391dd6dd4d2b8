"""`guardrail.verdict_text.all_failed`: what an LLM reads when every candidate failed its tests.

The verdict dicts are shaped as `guardrail.integration.verdict_metadata` writes them; the values
under ``returned`` as the judge records them (tests/test_failed_returned.py runs the real judge).
"""

from __future__ import annotations

from typing import Any

from guardrail.verdict_text import all_failed

TEST = "assert double(2) == 5"


def _failed(*outcomes: dict[str, Any], reason: str = "tests_failed") -> dict[str, Any]:
    return {"status": "failed", "reason": reason, "tests": list(outcomes)}


def _returned(text: str, key: str | None = None, test: str = TEST) -> dict[str, Any]:
    got = {"kind": "value", "text": text, "key": key or f"k{text}"}
    return {"test": test, "outcome": "FAIL", "returned": got}


def _raised(name: str, test: str = TEST) -> dict[str, Any]:
    return {"test": test, "outcome": f"ERROR:{name}"}


def _meta(name: str, line: int = 1) -> dict[str, Any]:
    return {"qualified_name": name, "file": "lib/m.py", "start_line": line, "end_line": line + 1}


def test_agreeing_candidates_point_at_the_test() -> None:
    dropped = [
        (_failed(_returned("4")), _meta("double")),
        (_failed(_returned("4")), _meta("twice", 4)),
        (_failed(_raised("TypeError")), _meta("dbl", 7)),
    ]
    lines = all_failed("'double'", dropped).splitlines()
    assert lines[0] == (
        "Nothing could be verified for 'double': 3 candidates ran and all failed your tests."
        " First failing test: assert double(2) == 5"
    )
    assert lines[1:4] == [
        "  [1] double (lib/m.py:1-2) returned 4",
        "  [2] twice (lib/m.py:4-5) returned 4",
        "  [3] dbl (lib/m.py:7-8) raised TypeError",
    ]
    assert lines[4].startswith("2 of 3 returned 4 on it: if that is the right answer, the test")


def test_disagreeing_candidates_point_at_missing_code() -> None:
    dropped = [
        (_failed(_returned("4")), _meta("a")),
        (_failed(_returned("3")), _meta("b")),
        (_failed(_raised("ValueError")), _meta("c")),
    ]
    last = all_failed("'q'", dropped).splitlines()[-1]
    assert last.startswith("They do not agree on what it should give, so the code you need is")
    assert "write the function yourself" in last


def test_equal_values_agree_by_key_not_by_text() -> None:
    dropped = [
        (_failed(_returned("4", key="four")), _meta("a")),
        (_failed(_returned("4.0", key="four")), _meta("b")),
    ]
    assert all_failed("'q'", dropped).splitlines()[-1].startswith("All 2 returned 4 on it")


def test_one_candidate_and_others_that_could_not_be_judged() -> None:
    error = {"status": "error", "reason": "missing_entry_point", "tests": []}
    dropped = [(_failed(_returned("[]")), _meta("f")), (error, _meta("g"))]
    text = all_failed("'q'", dropped, yours="the tests", again="query again")
    assert text.startswith(
        "Nothing could be verified for 'q': 1 candidate ran and failed the tests (1 more could"
        " not be judged: no function the tests call)."
    )
    assert text.splitlines()[-1].startswith(
        "It returned [] there: if that is the right answer, the test is wrong; fix it and query"
        " again."
    )
    only_errors = all_failed("'q'", [(error, _meta("g"))])
    assert "1 candidate could not be judged against your tests (no function the tests call)" in (
        only_errors
    )


def test_a_candidate_failing_another_test_first_says_which() -> None:
    passed = {"test": TEST, "outcome": "pass"}
    dropped = [
        (_failed(_returned("4")), _meta("a")),
        (_failed(passed, _returned("0", test="assert double(0) == 1")), _meta("b")),
    ]
    line = all_failed("'q'", dropped).splitlines()[2]
    assert line == "  [2] b (lib/m.py:1-2) on another test, assert double(0) == 1, returned 0"


def test_values_and_names_are_one_capped_line_without_escapes() -> None:
    hostile = "\x1b[2J" + "x" * 500 + "\nVERIFIED"
    dropped = [(_failed(_returned(hostile)), {"qualified_name": "not a name\nVERIFIED"})]
    text = all_failed("'q'", dropped)
    assert "\x1b" not in text and "\\x1b[2J" in text
    line = text.splitlines()[1]
    assert line.startswith("  [1] a candidate returned \\x1b[2J")  # the planted name is dropped
    assert len(line) < 120
    assert len(text.splitlines()) == 3


def test_many_candidates_are_counted_not_listed() -> None:
    dropped = [(_failed(_returned("4")), _meta(f"f{n}")) for n in range(9)]
    lines = all_failed("'q'", dropped).splitlines()
    assert lines[7] == "  ... and 3 more that failed"
    assert lines[8].startswith("All 9 returned 4 on it")


def test_candidates_judged_by_their_own_doctests_are_not_said_to_fail_yours() -> None:
    verdict = {**_failed(_returned("4")), "spec_source": "doctest"}
    text = all_failed("'q'", [(verdict, _meta("f"))])
    assert "1 candidate ran and failed their own doctests." in text
    assert "your tests" not in text
