"""ExecRetrieval's metrics, and what an agent taking the top result would have acted on.

The input is small and typed: per query, the ranked items handed over (`RankedQuery` of
`RankedItem`, rank 1 first; an empty ranking means the gate abstained and nothing was handed
over). Everything is computed from unrounded values; `round_metrics` rounds them to
4-decimal figures (`release_rounded` the release's own, whose gaps differ).

Definitions (k in 1, 3, 5, 10; unweighted means over queries):

- ``exec@k``: 1 if any of the top k passes all tests of the query, else 0.
- ``precision@k``: number of the top k that pass all tests, divided by k (also when fewer than k
  items were handed over).
- ``ndcg@k``: binary gain (1 for ids in the query's ``correct_corpus_ids``), DCG = sum of
  gain / log2(rank + 1) over the top k, divided by the ideal DCG over min(k, n_correct) items.
- ``exec_ndcg_gap@k``: exec@k - ndcg@k.
- agent view: share of queries whose rank-1 item is buggy (fails a test), correct (passes all),
  or absent.
- rank-1 miss composition: among queries whose rank-1 item fails, the share that is one of the
  query's own paired distractors, and the misses by bug type.
- canonical below a distractor: share of queries whose best canonical score is strictly below the
  best score of its paired distractors; needs the scores of all of them (`SnippetScores`).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "AGENT_KEYS",
    "DEFAULT_KS",
    "AgentView",
    "BelowShare",
    "MissComposition",
    "RankedItem",
    "RankedQuery",
    "SnippetScores",
    "agent_view",
    "canonical_below_distractor",
    "compute_metrics",
    "metric_keys",
    "per_query_vectors",
    "rank1_miss_composition",
    "release_rounded",
    "round_metrics",
]

DEFAULT_KS: tuple[int, ...] = (1, 3, 5, 10)
"""The cut-offs of the release (``ks`` in every results file)."""

AGENT_KEYS: tuple[str, ...] = ("agent_buggy", "agent_correct", "agent_nothing")
"""Per-query vectors of the agent view, in `per_query_vectors` (0/1 each, one of them is 1)."""

NO_BUG_TYPE = "(none)"
"""Bug-type key for a failing rank-1 item that carries no bug type (another query's canonical)."""

_METRIC_NAMES = ("exec", "precision", "ndcg", "exec_ndcg_gap")


@dataclass(frozen=True, slots=True)
class RankedItem:
    """One snippet in a ranking.

    Attributes:
        corpus_id: the snippet's id in the pool.
        passes_all_tests: it passed every test of the query (the full suite, hidden tests too).
        is_correct_id: its id is in the query's ``correct_corpus_ids`` (the gain of ndcg).
        bug_type: the snippet's bug type, "" for a canonical.
        is_paired_distractor: its id is in the query's ``paired_distractor_corpus_ids``.
        score: the retriever's score (similarity or BM25), when known.
    """

    corpus_id: str
    passes_all_tests: bool
    is_correct_id: bool
    bug_type: str = ""
    is_paired_distractor: bool = False
    score: float | None = None


@dataclass(frozen=True, slots=True)
class SnippetScores:
    """The retriever's scores for all of a query's canonicals and all of its paired distractors."""

    canonical: tuple[float, ...]
    distractors: tuple[float, ...]

    @property
    def canonical_below(self) -> bool:
        """The best canonical scores strictly below the best paired distractor."""
        if not self.canonical or not self.distractors:
            return False
        return max(self.canonical) < max(self.distractors)


@dataclass(frozen=True, slots=True)
class RankedQuery:
    """What one query handed to the agent, rank 1 first.

    Attributes:
        query_id: the query's id.
        items: the ranking; empty when the gate abstained.
        n_correct: number of ids in ``correct_corpus_ids`` (the ideal DCG needs it).
        snippet_scores: scores of all the query's canonicals and paired distractors, when the
            retriever scored the whole pool (dense, BM25); None for a stored top-10 replay.
    """

    query_id: str
    items: tuple[RankedItem, ...]
    n_correct: int = 1
    snippet_scores: SnippetScores | None = field(default=None)

    def __post_init__(self) -> None:
        if self.n_correct < 1:
            raise ValueError(
                f"query {self.query_id!r}: n_correct must be >= 1, not {self.n_correct}"
            )


@dataclass(frozen=True, slots=True)
class AgentView:
    """Shares of queries where the agent got buggy code, correct code, or nothing (counts too)."""

    n_queries: int
    n_buggy: int
    n_correct: int
    n_nothing: int

    @property
    def buggy(self) -> float:
        """Share of queries whose rank-1 item fails at least one test."""
        return self.n_buggy / self.n_queries

    @property
    def correct(self) -> float:
        """Share of queries whose rank-1 item passes all tests."""
        return self.n_correct / self.n_queries

    @property
    def nothing(self) -> float:
        """Share of queries where nothing was handed over (the gate abstained)."""
        return self.n_nothing / self.n_queries


@dataclass(frozen=True, slots=True)
class MissComposition:
    """Where failing rank-1 items come from.

    Attributes:
        n_misses: queries whose rank-1 item fails a test.
        n_paired: of those, how many rank-1 items are the query's own paired distractors.
        by_bug_type: misses per bug type of the rank-1 item (`NO_BUG_TYPE` when it has none).
    """

    n_misses: int
    n_paired: int
    by_bug_type: dict[str, int]

    @property
    def paired_share(self) -> float | None:
        """Share of misses that are the query's own paired distractor; None without misses."""
        return self.n_paired / self.n_misses if self.n_misses else None

    def bug_type_shares(self) -> dict[str, float]:
        """Misses per bug type as shares of all misses, largest first."""
        if not self.n_misses:
            return {}
        return {name: count / self.n_misses for name, count in self.by_bug_type.items()}


@dataclass(frozen=True, slots=True)
class BelowShare:
    """Canonical-below-a-distractor over the queries whose snippets were all scored."""

    n_queries: int
    n_scored: int
    n_below: int

    @property
    def share(self) -> float | None:
        """Share of scored queries with the canonical below a distractor; None if none scored."""
        return self.n_below / self.n_scored if self.n_scored else None


def metric_keys(ks: Iterable[int] = DEFAULT_KS) -> list[str]:
    """The release's metric keys, in its order: exec@k, precision@k, ndcg@k, exec_ndcg_gap@k."""
    return [f"{name}@{k}" for k in _checked_ks(ks) for name in _METRIC_NAMES]


def per_query_vectors(
    queries: Sequence[RankedQuery], ks: Iterable[int] = DEFAULT_KS
) -> dict[str, NDArray[np.float64]]:
    """One value per query (in the given order) for every metric key and every `AGENT_KEYS` key.

    These are the vectors the statistics resample; their means are the metrics.
    """
    if not queries:
        raise ValueError("no queries to score")
    ks = _checked_ks(ks)
    rows = [_query_values(query, ks) for query in queries]
    return {key: np.array([row[key] for row in rows], dtype=np.float64) for key in rows[0]}


def compute_metrics(
    queries: Sequence[RankedQuery], ks: Iterable[int] = DEFAULT_KS
) -> dict[str, float]:
    """Unrounded means over queries, keyed and ordered like a results file's ``metrics``."""
    ks = _checked_ks(ks)
    vectors = per_query_vectors(queries, ks)
    return {key: float(vectors[key].mean()) for key in metric_keys(ks)}


def round_metrics(metrics: Mapping[str, float], digits: int = 4) -> dict[str, float]:
    """Every metric rounded on its own, the gaps too (from their unrounded values).

    So a figure has one value wherever it is written: ``exec_ndcg_gap@k`` in a results file, in
    ``summary.json``'s metrics and as its interval's estimate all round the same unrounded
    number. The release rounds its gaps differently (`release_rounded`).
    """
    return {key: round(value, digits) for key, value in metrics.items()}


def release_rounded(metrics: Mapping[str, float], digits: int = 4) -> dict[str, float]:
    """The release's printed figures: each gap as the difference of the two rounded parts.

    The release reports ``exec_ndcg_gap@k`` as the difference of the two rounded figures it
    prints (its gemini-embedding-2 row: exec@3 0.8232 - ndcg@3 0.6142 = 0.209, whereas the
    unrounded difference 0.20906 rounds to 0.2091). Use it only to compare with release files.
    """
    rounded = round_metrics(metrics, digits)
    for key in metrics:
        name, _, k = key.partition("@")
        exec_key, ndcg_key = f"exec@{k}", f"ndcg@{k}"
        if name == "exec_ndcg_gap" and exec_key in rounded and ndcg_key in rounded:
            rounded[key] = round(rounded[exec_key] - rounded[ndcg_key], digits)
    return rounded


def agent_view(queries: Sequence[RankedQuery]) -> AgentView:
    """What the agent taking the top result acted on, counted over queries."""
    if not queries:
        raise ValueError("no queries to score")
    nothing = sum(1 for query in queries if not query.items)
    correct = sum(1 for query in queries if query.items and query.items[0].passes_all_tests)
    return AgentView(len(queries), len(queries) - nothing - correct, correct, nothing)


def rank1_miss_composition(queries: Sequence[RankedQuery]) -> MissComposition:
    """Among queries whose rank-1 item fails a test: paired-distractor share and bug types."""
    misses = [query.items[0] for query in queries if query.items]
    misses = [item for item in misses if not item.passes_all_tests]
    by_type = Counter(item.bug_type or NO_BUG_TYPE for item in misses)
    return MissComposition(
        n_misses=len(misses),
        n_paired=sum(1 for item in misses if item.is_paired_distractor),
        by_bug_type=dict(sorted(by_type.items(), key=lambda pair: (-pair[1], pair[0]))),
    )


def canonical_below_distractor(queries: Sequence[RankedQuery]) -> BelowShare:
    """Share of queries whose canonical scores below one of its paired distractors.

    Only queries with `RankedQuery.snippet_scores` count (``n_scored``); a replay of stored
    top-10 rankings has none, so its share is None.
    """
    scored = [query.snippet_scores for query in queries if query.snippet_scores is not None]
    return BelowShare(
        n_queries=len(queries),
        n_scored=len(scored),
        n_below=sum(1 for scores in scored if scores.canonical_below),
    )


def _query_values(query: RankedQuery, ks: Sequence[int]) -> dict[str, float]:
    passes = [item.passes_all_tests for item in query.items]
    gains = [item.is_correct_id for item in query.items]
    values: dict[str, float] = {}
    for k in ks:
        exec_k = 1.0 if any(passes[:k]) else 0.0
        dcg = sum(1.0 / math.log2(rank + 1) for rank, gain in enumerate(gains[:k], 1) if gain)
        ideal = sum(1.0 / math.log2(rank + 1) for rank in range(1, min(k, query.n_correct) + 1))
        ndcg_k = dcg / ideal
        values[f"exec@{k}"] = exec_k
        values[f"precision@{k}"] = sum(passes[:k]) / k
        values[f"ndcg@{k}"] = ndcg_k
        values[f"exec_ndcg_gap@{k}"] = exec_k - ndcg_k
    top = query.items[0] if query.items else None
    values["agent_buggy"] = 1.0 if top is not None and not top.passes_all_tests else 0.0
    values["agent_correct"] = 1.0 if top is not None and top.passes_all_tests else 0.0
    values["agent_nothing"] = 1.0 if top is None else 0.0
    return values


def _checked_ks(ks: Iterable[int]) -> tuple[int, ...]:
    checked = tuple(ks)
    if not checked or any(k < 1 for k in checked) or len(set(checked)) != len(checked):
        raise ValueError(f"ks must be distinct positive cut-offs, not {checked!r}")
    return checked
