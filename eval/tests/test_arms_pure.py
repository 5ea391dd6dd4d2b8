"""Ties, the structural picker and the visible-test draws, on hand-made inputs (no sandbox)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from guardrail_eval.pool import Query
from guardrail_eval.structural import code_token_ids, structural_order, token_edit_distance
from guardrail_eval.ties import fair_order, group_complete, tied
from guardrail_eval.visible import visible_indices


def test_tied_is_exact_equality_or_within_a_millionth() -> None:
    assert tied(0.5, 0.5) and tied(0.0, 0.0)
    assert tied(0.8, 0.8 * (1 + 5e-7))
    assert not tied(0.8, 0.8 * (1 + 5e-6))


def test_ties_are_shuffled_by_seed_and_query_never_kept_in_input_order() -> None:
    scores = [0.9, 0.7, 0.7, 0.7, 0.7, 0.7, 0.7, 0.1]
    orders = {tuple(fair_order(scores, seed=0, key=f"q{n}")) for n in range(20)}
    assert all(order[0] == 0 and order[-1] == 7 for order in orders)  # distinct scores stay put
    assert all(sorted(order[1:7]) == [1, 2, 3, 4, 5, 6] for order in orders)
    assert len(orders) > 10  # the tied middle is shuffled per query
    first = fair_order(scores, seed=0, key="q1")
    assert fair_order(scores, seed=0, key="q1") == first  # seeded: reproducible
    assert any(fair_order(scores, seed=s, key="q1") != first for s in range(1, 6))
    # the corpus order the input came in does not decide: a canonical listed first wins 1/n
    wins = sum(fair_order([0.5, 0.5], seed=0, key=f"q{n}")[0] == 0 for n in range(400))
    assert 150 < wins < 250


def test_a_tie_group_is_complete_only_when_the_score_changes_after_the_cut() -> None:
    assert group_complete([0.9, 0.8, 0.7], 2)
    assert not group_complete([0.9, 0.8, 0.8], 2)  # rank 3 may tie with rank 2: fetch more
    assert group_complete([0.9, 0.8, 0.8, 0.7], 2)
    assert not group_complete([0.9, 0.8], 2)  # nothing past the cut yet


def _lev(a: list[int], b: list[int]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


def test_token_edit_distance_is_levenshtein() -> None:
    rng = np.random.default_rng(0)
    for _ in range(300):
        a = rng.integers(0, 4, rng.integers(0, 12))
        b = rng.integers(0, 4, rng.integers(0, 12))
        assert token_edit_distance(a, b) == _lev(list(a), list(b))
    vocabulary: dict[str, int] = {}
    one = code_token_ids("def f(x):\n    return x + 1  # comment\n", vocabulary)
    two = code_token_ids("def f(x):\n    return x - 1\n", vocabulary)
    assert token_edit_distance(one, two) == 1  # comments do not count


CANONICAL = (
    "def clamp(x, low, high):\n    if x < low:\n        return low\n    return min(x, high)\n"
)
MUTANTS = [
    CANONICAL.replace("x < low", "x <= low"),
    CANONICAL.replace("min(x, high)", "max(x, high)"),
    CANONICAL.replace("return low", "return high"),
]
OTHER = "def words(text):\n    return [w for w in text.split() if w]\n"


def test_the_structural_picker_hands_over_the_family_centre_then_retrieval_order() -> None:
    codes = [MUTANTS[0], OTHER, MUTANTS[1], CANONICAL, MUTANTS[2]]
    assert structural_order(codes) == [3, 0, 1, 2, 4]  # the canonical, then the rest in order
    assert structural_order([OTHER, *MUTANTS]) == [0, 1, 2, 3]  # no family: retrieval order
    assert structural_order([]) == []


def _query(n_tests: int) -> Query:
    return Query(
        query_id="q1",
        query="clamp",
        correct_corpus_ids=["c1"],
        paired_distractor_corpus_ids=[],
        test_suite=[f"assert clamp({i}, 0, 9) == {i}" for i in range(n_tests)],
    )


def test_visible_tests_are_seeded_random_nested_subsets() -> None:
    query = _query(8)
    draws = [visible_indices(query, 1, draw, seed=0) for draw in range(20)]
    assert len(set(draws)) > 3 and all(len(d) == 1 for d in draws)  # not always the first
    assert visible_indices(query, 1, 3, seed=0) == draws[3]
    assert any(visible_indices(query, 1, 3, seed=s) != draws[3] for s in range(1, 6))
    for draw in range(5):
        grown = [set(visible_indices(query, n, draw, seed=0)) for n in range(1, 9)]
        assert all(a < b for a, b in itertools.pairwise(grown))
        assert grown[-1] == set(range(8))
    assert visible_indices(_query(2), 5, 0, seed=0) == (0, 1)  # capped at the whole suite


@pytest.mark.parametrize("code", ["def f(:\n", "x = '''unterminated"])
def test_code_that_does_not_tokenize_still_has_a_distance(code: str) -> None:
    vocabulary: dict[str, int] = {}
    assert code_token_ids(code, vocabulary).size > 0
