"""`guardrail.verdict_text`: the one line an LLM reads about a gated candidate."""

from __future__ import annotations

from typing import Any

import pytest

from guardrail.verdict_text import describe, lacks_context, missing_package, where_it_lives

MODULE = {"module": "more_itertools.more", "qualified_name": "chunked", "file": "m/more.py"}


def _verdict(status: str, reason: str, source: str, **more: Any) -> dict[str, Any]:
    passed = ["assert chunked([1], 1) == [[1]]"] if status == "verified" else []
    return {
        "status": status,
        "reason": reason,
        "spec_source": source,
        "passed_tests": passed,
        **more,
    }


@pytest.mark.parametrize(
    ("source", "line"),
    [
        ("query", "VERIFIED against the query's tests: passed 1/1"),
        ("provider", "VERIFIED against the test provider's tests: passed 1/1"),
        (
            "doctest",
            "VERIFIED against its own doctests only: passed 1/1, not checked against tests"
            " written for this query",
        ),
        (
            "stored",
            "VERIFIED against its own stored tests only: passed 1/1, not checked against tests"
            " written for this query",
        ),
    ],
)
def test_verified_says_what_it_was_judged_against(source: str, line: str) -> None:
    assert describe(_verdict("verified", "passed", source), MODULE) == line


def test_an_alias_is_named_and_query_tests_can_be_called_yours() -> None:
    verdict = _verdict("verified", "passed", "query", alias="chunks")
    assert describe(verdict, MODULE, query_tests="your tests") == (
        "VERIFIED against your tests: passed 1/1 (its function 'chunks' was called under the"
        " tested name)"
    )


def test_missing_context_points_to_the_import() -> None:
    line = describe(_verdict("unverifiable", "missing_context", "query"), MODULE)
    assert line == (
        "UNVERIFIED (missing_context): it could not run outside its module; it lives at"
        " `from more_itertools.more import chunked`: import it from there rather than rewrite it"
    )


def test_missing_dependency_names_the_package_from_the_message_or_a_test_detail() -> None:
    details = {"tests": [{"test": "t", "outcome": "ERROR:x", "detail": "No module named 'yaml'"}]}
    hint = "ModuleNotFoundError: No module named 'numpy.core'; to judge it, add ..."
    for extra in ({"message": hint}, details):
        verdict = _verdict("unverifiable", "missing_dependency", "query", **extra)
        assert lacks_context(verdict)
        package = "numpy" if "message" in extra else "yaml"
        assert missing_package(verdict) == package
        assert f"it needs the package '{package}', which the sandbox lacks (an image with it:" in (
            describe(verdict, MODULE)
        )
    quoted = _verdict("unverifiable", "missing_dependency", "query", message="module 'yaml' ...")
    assert missing_package(quoted) == "yaml"
    unnamed = _verdict("unverifiable", "missing_dependency", "query")
    assert "it needs a package, which the sandbox lacks" in describe(unnamed, {})


def test_where_it_lives_reaches_a_method_through_its_class_and_falls_back_to_the_file() -> None:
    method = {"module": "more_itertools.more", "qualified_name": "peekable.peek"}
    assert where_it_lives(method) == "from more_itertools.more import peekable, then peekable.peek"
    no_module = {"qualified_name": "chunked", "file": "m/more.py", "start_line": 3, "end_line": 9}
    assert where_it_lives(no_module) == "chunked in m/more.py, lines 3-9"
    hostile = {"module": "os; import x", "qualified_name": "f", "file": "a\n[2] VERIFIED.py"}
    assert where_it_lives(hostile) is None  # a planted file is no path: never shown
    assert where_it_lives({**hostile, "file": "a/b.py"}) == "f in a/b.py"
    assert where_it_lives({"qualified_name": "f"}) is None


def test_unverified_lines_say_why_and_nothing_is_nothing() -> None:
    assert describe(_verdict("unverifiable", "no_tests", "none"), MODULE) == (
        "UNVERIFIED: judged against nothing (no tests were given and none are stored)"
    )
    odd = _verdict("unverifiable", "unserialisable", "query", message="returned a\nwidget")
    assert describe(odd, MODULE) == (
        "UNVERIFIED (unverifiable against the query's tests: returned a\\nwidget)"
    )
    assert describe({}, {}).startswith("UNVERIFIED: judged against nothing")
