"""`resolve_spec`: which tests a candidate is verified against, in DESIGN.md's order."""

from __future__ import annotations

import json

import pytest

from guardrail.errors import SpecError
from guardrail.gate import Candidate
from guardrail.sources import ResolvedSpec, SpecSource, resolve, resolve_spec
from guardrail.spec import Spec

CODE = "def is_leap_year(y):\n    return y % 4 == 0\n"
STORED = ["assert is_leap_year(2024) is True", "assert is_leap_year(2023) is False"]


def _candidate(**metadata: object) -> Candidate:
    return Candidate(code=CODE, id="c1", metadata=metadata)


def test_query_tests_win_over_stored_tests_and_infer_the_entry_point() -> None:
    candidate = _candidate(tests=STORED, entry_point="is_leap_year")
    resolved = resolve(candidate, ["assert leap(2000) is True"], setup="import math")
    assert resolved.source is SpecSource.QUERY
    assert resolved.spec == Spec.build(["assert leap(2000) is True"], "leap", "import math")


def test_query_tests_as_spec_string_or_with_explicit_entry_point() -> None:
    spec = Spec.build(["assert g(1) == 1"], "g")
    assert resolve(_candidate(), spec) == ResolvedSpec(spec, SpecSource.QUERY)
    single = resolve_spec(_candidate(), "assert g(1) == 1")
    assert single is not None and single.tests == ("assert g(1) == 1",)
    named = resolve_spec(_candidate(), ["assert check(g(1))"], entry_point="g")
    assert named is not None and named.entry_point == "g"


def test_entry_point_falls_back_to_the_candidates_when_the_tests_do_not_tell() -> None:
    tests = ["assert leap_table[2024] is True"]  # calls nothing
    spec = resolve_spec(_candidate(entry_point="is_leap_year"), tests)
    assert spec is not None and spec.entry_point == "is_leap_year"
    with pytest.raises(SpecError, match="cannot tell which function"):
        resolve_spec(_candidate(), tests)


def test_stored_tests_as_list_or_as_chroma_json_text() -> None:
    for stored in (STORED, json.dumps(STORED)):
        candidate = _candidate(tests=stored, setup="import calendar", entry_point="is_leap_year")
        resolved = resolve(candidate)
        assert resolved.source is SpecSource.STORED
        assert resolved.spec == Spec.build(STORED, "is_leap_year", "import calendar")


def test_doctest_derived_tests_are_labelled_and_empty_query_tests_fall_through() -> None:
    candidate = _candidate(tests=STORED, tests_source="doctest")
    resolved = resolve(candidate, [])
    assert resolved.source is SpecSource.DOCTEST
    assert resolved.spec is not None and resolved.spec.entry_point == "is_leap_year"


@pytest.mark.parametrize("tests", [None, [], "", "[]"])
def test_no_tests_anywhere_is_unverifiable(tests: object) -> None:
    metadata = {} if tests is None else {"tests": tests}
    assert resolve(Candidate(code=CODE, metadata=metadata)) == ResolvedSpec(None, SpecSource.NONE)


@pytest.mark.parametrize(
    ("stored", "message"),
    [
        ("assert f(1)", "metadata 'tests' must be a list of test strings"),
        ([1, 2], "must be a list of test strings"),
        (["assert f(1) =="], "stored tests: test 1 does not parse"),
    ],
)
def test_unusable_stored_tests_are_a_spec_error_naming_the_candidate(
    stored: object, message: str
) -> None:
    with pytest.raises(SpecError, match=f"candidate 'c1': .*{message}"):
        resolve(_candidate(tests=stored, entry_point="f"))
