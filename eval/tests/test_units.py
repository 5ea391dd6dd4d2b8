"""Visible units: a thin-tests draw is a whole doctest sequence, proven to pass by validation.

The pure part reads units off a suite; the Docker part runs `fixtures/units/` (a stateful
``it = pairs(...)`` / ``next(it)`` sequence, and ``tally`` whose examples share module state no
name shows) through pool validation, which proves the canonical passes every unit on its own.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from guardrail.gate import Gate
from guardrail_eval.errors import LabelError
from guardrail_eval.pool import Query, load_pool
from guardrail_eval.units import suite_units
from guardrail_eval.validation import validate_pool
from guardrail_eval.visible import visible_indices

UNITS = Path(__file__).parent / "fixtures" / "units"


def _example(source: str, want: str = "") -> str:
    return (
        f"__doctest_example__({source!r}, {want!r})" if want else f"__doctest_example__({source!r})"
    )


def test_a_doctest_sequence_is_one_unit_and_an_independent_example_its_own() -> None:
    tests = (
        _example("it = chunked([1, 2, 3], 2)"),
        _example("next(it)", "[1, 2]"),
        _example("xs = [4]"),
        _example("next(it)", "[3]"),
        _example("chunked(xs, 1)", "[[4]]"),
        _example("chunked([], 1)", "[]"),
    )
    assert suite_units(tests) == ((0, 1, 3), (2, 4), (5,))


def test_definitions_imports_and_unreadable_tests_keep_what_they_need() -> None:
    tests = (
        _example("def double(x):\n    return 2 * x\n"),
        _example("import math as m"),
        _example("apply(double, m.pi)", "6.28..."),
        "assert f(",  # cannot be read: it takes every earlier test with it
    )
    assert suite_units(tests) == ((0, 1, 2, 3),)
    asserts = ("assert f(1) == 1", "x = f(2)", "assert x == 2", "assert f(3) == 3")
    assert suite_units(asserts) == ((0,), (1, 2), (3,))


def test_a_visible_draw_is_whole_units_in_suite_order() -> None:
    query = load_pool(UNITS).queries[0]
    draws = {visible_indices(query, 1, draw, seed=0) for draw in range(20)}
    assert draws == {(0, 1, 2), (3,)}  # never a lone next(it)
    assert visible_indices(query, 2, 0, seed=0) == (0, 1, 2, 3)
    stored = query.model_copy(update={"test_units": [[3]]})
    assert {visible_indices(stored, 1, draw, seed=0) for draw in range(5)} == {(3,)}


@pytest.mark.parametrize("units", [[], [[]], [[2, 1]], [[0, 4]], [[-1]]])
def test_stored_units_must_be_sorted_indices_of_the_suite(units: list[list[int]]) -> None:
    with pytest.raises(ValidationError, match="test_units"):
        Query(
            query_id="q",
            query="q",
            test_suite=["assert f()"] * 4,
            correct_corpus_ids=["c"],
            paired_distractor_corpus_ids=[],
            test_units=units,
        )


@pytest.mark.docker
def test_validation_proves_every_canonical_passes_every_unit_alone(gate: Gate) -> None:
    validation = validate_pool(load_pool(UNITS), gate)
    assert (validation.canonicals, validation.distractors, validation.units) == (2, 2, 4)
    # tally('b') alone answers 1: the examples share module state no name shows.
    [found] = validation.contradictions
    assert (found.query_id, found.corpus_id, found.role, found.unit) == (
        "q_tally",
        "k_tally",
        "unit",
        (1,),
    )
    assert (
        "k_tally, canonical (its visible unit of tests [1] alone) of q_tally (queries.jsonl:2),"
        " fails a visible draw of its query (failed/tests_failed): 1 of 1 failed"
    ) in found.describe()
    with pytest.raises(LabelError, match="1 label"):
        validation.settle()
    settled, summary = validation.settle(relabel=True)
    assert settled.queries[1].test_units == [[0]]
    assert settled.queries[0].test_units is None  # q_pairs passed every unit: unchanged
    assert [c.action for c in summary.relabelled] == ["unit dropped"]
    assert summary.units == 4 and summary.checked == 8
    assert {visible_indices(settled.queries[1], 1, d, seed=0) for d in range(5)} == {(0,)}
