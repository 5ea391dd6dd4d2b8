"""Metrics: the release's check values from a constructed 939-query ranking, and small hand cases.

The constructed ranking (gemini-embedding-2 in the release): every query's top 10 holds its one
canonical, which is the only item that passes all of the query's tests; the rest are distractors
(its own or other queries') that fail at least one test. The canonical sits at rank 1 for 311
queries, rank 2 for 265, rank 3 for 197, rank 4 for 120, rank 5 for 43, and at ranks 7, 8 and 9
for one query each.

Why this construction: exec@1, exec@3 and exec@5 fix the histogram of the first passing rank
(311, 311+265+197 = 773 and 773+120+43 = 936 of 939). precision@3 = 0.2744 then fixes how many
passing items the top 3 hold in all: 0.2744 * 3 * 939 = 772.98, so exactly 773, i.e. one passing
item per query; a second passing item anywhere in any top 3 gives 774 / 2817 = 0.2748. With one
passing item per query that is also the only correct id, ndcg@3 and ndcg@5 follow from the same
histogram (0.6142, 0.6869). ndcg@10 = 0.6879 needs the last three canonicals to add between 0.879
and 0.973 of DCG: ranks 7, 8 and 9 add 0.950 (several other placements in 6-10 also do; exec@10,
precision@10 and the other figures do not depend on which).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from release_check_values import GEMINI_EMBEDDING_2

from guardrail_eval.metrics import (
    AGENT_KEYS,
    NO_BUG_TYPE,
    RankedItem,
    RankedQuery,
    SnippetScores,
    agent_view,
    canonical_below_distractor,
    compute_metrics,
    metric_keys,
    per_query_vectors,
    rank1_miss_composition,
    release_rounded,
    round_metrics,
)

HISTOGRAM = {1: 311, 2: 265, 3: 197, 4: 120, 5: 43, 7: 1, 8: 1, 9: 1}


def canonical_at(
    rank: int, query_id: str = "q", *, extra_pass_at: int | None = None
) -> RankedQuery:
    """A top 10 whose only passing item is the canonical at ``rank`` (plus one, if asked)."""
    items = []
    for position in range(1, 11):
        if position == rank:
            items.append(RankedItem(f"{query_id}-canon", passes_all_tests=True, is_correct_id=True))
        else:
            items.append(
                RankedItem(
                    f"{query_id}-d{position}",
                    passes_all_tests=position == extra_pass_at,
                    is_correct_id=False,
                    bug_type="off_by_one",
                    is_paired_distractor=position <= 5,
                )
            )
    return RankedQuery(query_id, tuple(items))


def gemini_like() -> list[RankedQuery]:
    return [
        canonical_at(rank, f"q{rank}-{n}")
        for rank, count in HISTOGRAM.items()
        for n in range(count)
    ]


def test_the_constructed_ranking_reproduces_every_published_figure() -> None:
    queries = gemini_like()
    assert len(queries) == 939
    metrics = compute_metrics(queries)
    assert list(metrics) == list(GEMINI_EMBEDDING_2)  # keys and their order
    assert release_rounded(metrics) == GEMINI_EMBEDDING_2
    assert metrics["exec@1"] == 311 / 939
    assert metrics["precision@3"] == 773 / (3 * 939)


def test_the_release_reports_gaps_as_differences_of_rounded_figures() -> None:
    metrics = compute_metrics(gemini_like())
    # Unrounded, exec@3 - ndcg@3 = 0.209056..., which would print as 0.2091; the release prints
    # 0.209 = 0.8232 - 0.6142. Unrounded values stay unrounded; only reporting rounds.
    assert metrics["exec_ndcg_gap@3"] == pytest.approx(0.2090560, abs=1e-7)
    assert round(metrics["exec_ndcg_gap@3"], 4) == 0.2091
    assert release_rounded(metrics)["exec_ndcg_gap@3"] == 0.209
    # Our own files round the gap from its unrounded value: one number, one value everywhere.
    assert round_metrics(metrics)["exec_ndcg_gap@3"] == 0.2091


def test_a_second_passing_item_in_one_top_3_breaks_precision_at_3() -> None:
    queries = gemini_like()
    queries[0] = canonical_at(1, "extra", extra_pass_at=2)
    assert round(compute_metrics(queries)["precision@3"], 4) == 0.2748


def test_metric_keys_follow_the_release_order() -> None:
    assert metric_keys((1, 3)) == [
        "exec@1", "precision@1", "ndcg@1", "exec_ndcg_gap@1",
        "exec@3", "precision@3", "ndcg@3", "exec_ndcg_gap@3",
    ]  # fmt: skip


def hand_cases() -> list[RankedQuery]:
    canon = RankedItem("c1", passes_all_tests=True, is_correct_id=True)
    own = RankedItem("d1", False, False, "off_by_one", is_paired_distractor=True, score=0.9)
    other = RankedItem("x9", False, False, "wrong_operator", is_paired_distractor=False)
    second = RankedItem("c2", passes_all_tests=True, is_correct_id=True)
    return [
        RankedQuery("a", (own, canon, other)),  # canonical at rank 2
        RankedQuery("b", (canon, own, second), n_correct=2),  # two canonicals, ranks 1 and 3
        RankedQuery("c", ()),  # the gate abstained
        RankedQuery("d", (other, own)),  # another query's distractor first, no canonical
    ]


def test_hand_computed_per_query_values() -> None:
    vectors = per_query_vectors(hand_cases(), ks=(1, 3, 5))
    assert list(vectors["exec@1"]) == [0, 1, 0, 0]
    assert list(vectors["exec@3"]) == [1, 1, 0, 0]
    assert list(vectors["precision@3"]) == pytest.approx([1 / 3, 2 / 3, 0, 0])
    # fewer than k items handed over still divide by k
    assert list(vectors["precision@5"]) == pytest.approx([1 / 5, 2 / 5, 0, 0])
    assert vectors["ndcg@1"][0] == 0.0
    assert vectors["ndcg@3"][0] == pytest.approx(1 / math.log2(3))  # 0.6309
    # two canonicals at ranks 1 and 3: (1 + 1/2) / (1 + 1/log2(3))
    assert vectors["ndcg@3"][1] == pytest.approx(1.5 / (1 + 1 / math.log2(3)))  # 0.9197
    assert vectors["ndcg@1"][1] == 1.0  # ideal DCG over min(k, n_correct) = 1 item
    assert list(vectors["exec_ndcg_gap@3"]) == pytest.approx(
        [1 - 1 / math.log2(3), 1 - 1.5 / (1 + 1 / math.log2(3)), 0, 0]
    )
    for key in AGENT_KEYS:
        assert key in vectors
    assert list(vectors["agent_buggy"]) == [1, 0, 0, 1]
    assert list(vectors["agent_correct"]) == [0, 1, 0, 0]
    assert list(vectors["agent_nothing"]) == [0, 0, 1, 0]


def test_compute_metrics_is_the_mean_of_the_vectors() -> None:
    metrics = compute_metrics(hand_cases(), ks=(3,))
    assert list(metrics) == ["exec@3", "precision@3", "ndcg@3", "exec_ndcg_gap@3"]
    assert metrics["exec@3"] == 0.5
    assert metrics["precision@3"] == pytest.approx((1 / 3 + 2 / 3) / 4)
    assert metrics["exec_ndcg_gap@3"] == pytest.approx(metrics["exec@3"] - metrics["ndcg@3"])


def test_agent_view_counts_buggy_correct_and_nothing() -> None:
    view = agent_view(hand_cases())
    assert (view.n_queries, view.n_buggy, view.n_correct, view.n_nothing) == (4, 2, 1, 1)
    assert (view.buggy, view.correct, view.nothing) == (0.5, 0.25, 0.25)


def test_rank1_miss_composition_splits_paired_distractors_and_bug_types() -> None:
    composition = rank1_miss_composition(hand_cases())
    # misses: query a (its own off_by_one distractor) and d (another query's wrong_operator)
    assert (composition.n_misses, composition.n_paired) == (2, 1)
    assert composition.paired_share == 0.5
    assert composition.by_bug_type == {"off_by_one": 1, "wrong_operator": 1}
    assert composition.bug_type_shares() == {"off_by_one": 0.5, "wrong_operator": 0.5}


def test_a_failing_rank1_without_bug_type_is_counted_as_none() -> None:
    other_canonical = RankedItem("c7", passes_all_tests=False, is_correct_id=False)
    composition = rank1_miss_composition([RankedQuery("q", (other_canonical,))])
    assert composition.by_bug_type == {NO_BUG_TYPE: 1}
    assert composition.paired_share == 0.0


def test_no_misses_means_no_share() -> None:
    canon = RankedItem("c1", passes_all_tests=True, is_correct_id=True)
    composition = rank1_miss_composition([RankedQuery("q", (canon,))])
    assert composition.n_misses == 0
    assert composition.paired_share is None
    assert composition.bug_type_shares() == {}


def test_canonical_below_a_distractor_needs_all_scores() -> None:
    below = SnippetScores(canonical=(0.80,), distractors=(0.70, 0.81, 0.60, 0.50))
    above = SnippetScores(canonical=(0.90,), distractors=(0.70, 0.81, 0.60, 0.50))
    tie = SnippetScores(canonical=(0.81,), distractors=(0.81,))  # a tie is not "below"
    queries = [
        RankedQuery("a", (), snippet_scores=below),
        RankedQuery("b", (), snippet_scores=above),
        RankedQuery("c", (), snippet_scores=tie),
        RankedQuery("d", ()),  # no scores (a replay of stored top-10 rankings)
    ]
    share = canonical_below_distractor(queries)
    assert (share.n_queries, share.n_scored, share.n_below) == (4, 3, 1)
    assert share.share == pytest.approx(1 / 3)
    assert canonical_below_distractor(queries[3:]).share is None


def test_round_metrics_rounds_each_figure_and_the_release_rounds_gaps_from_parts() -> None:
    metrics = {"exec@1": 0.123449, "ndcg@1": 0.12346, "exec_ndcg_gap@1": 0.123449 - 0.12346}
    assert round_metrics(metrics) == {"exec@1": 0.1234, "ndcg@1": 0.1235, "exec_ndcg_gap@1": -0.0}
    assert release_rounded(metrics) == {
        "exec@1": 0.1234,
        "ndcg@1": 0.1235,
        "exec_ndcg_gap@1": -0.0001,
    }


@pytest.mark.parametrize("ks", [(), (0,), (3, 3), (-1, 5)])
def test_bad_cut_offs_are_refused(ks: tuple[int, ...]) -> None:
    with pytest.raises(ValueError, match="ks must be distinct positive"):
        compute_metrics(hand_cases(), ks=ks)


def test_no_queries_is_refused() -> None:
    with pytest.raises(ValueError, match="no queries"):
        compute_metrics([])
    with pytest.raises(ValueError, match="no queries"):
        agent_view([])


def test_a_query_needs_a_correct_id() -> None:
    with pytest.raises(ValueError, match="n_correct must be >= 1"):
        RankedQuery("q", (), n_correct=0)


def test_vectors_keep_query_order() -> None:
    queries = gemini_like()
    vectors = per_query_vectors(queries)
    assert vectors["exec@1"][:311].sum() == 311
    assert vectors["exec@1"][311:].sum() == 0
    assert np.array_equal(vectors["agent_correct"], vectors["exec@1"])
