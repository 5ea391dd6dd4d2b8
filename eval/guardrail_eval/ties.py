"""Fair ties: equal retrieval scores are ordered by a seeded shuffle, never by corpus order.

A pool lists each canonical before its own distractors, so breaking ties by corpus order hands
the canonical every tie (MiniLM reads 256 tokens: a mutant past that embeds exactly like its
canonical; BM25 scores a one-token mutant like its canonical). Here:

- two scores **tie** when ``|a - b| <= TIE_RTOL * max(|a|, |b|)`` (exact equality included);
  sorted scores are grouped by chaining, so a group is a run of neighbours that each tie with
  the next. The tolerance absorbs float32 noise (the same text embedded in two batches differs
  in the 7th digit), not real differences;
- within a group the order is a shuffle seeded by ``(seed, key)`` (the key is the query id), so
  one query's order depends neither on the other queries nor on the run order.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["TIE_RTOL", "TIE_RULE", "fair_order", "group_complete", "tied"]

TIE_RTOL = 1e-6
TIE_RULE = (
    f"scores tie when |a - b| <= {TIE_RTOL:g} x max(|a|, |b|); tied snippets are ordered by a"
    " shuffle seeded by (seed, query id), never by corpus order"
)


def tied(a: float, b: float) -> bool:
    """``a`` and ``b`` count as equal scores."""
    return abs(a - b) <= TIE_RTOL * max(abs(a), abs(b))


def _tied_neighbours(ordered: NDArray[np.float64]) -> NDArray[np.bool_]:
    """For scores sorted descending: entry i is True when score i ties with score i + 1."""
    scale = np.maximum(np.abs(ordered[:-1]), np.abs(ordered[1:]))
    return np.abs(ordered[:-1] - ordered[1:]) <= TIE_RTOL * scale


def fair_order(scores: Sequence[float] | NDArray[np.float64], *, seed: int, key: str) -> list[int]:
    """Indices of ``scores`` best first; tied groups in a shuffle seeded by ``(seed, key)``."""
    values = np.asarray(scores, dtype=np.float64)
    if values.size == 0:
        return []
    by_score = np.argsort(-values, kind="stable")
    groups = np.concatenate(([0], np.cumsum(~_tied_neighbours(values[by_score]))))
    shuffle = _rng(seed, key).random(values.size)
    return [int(by_score[i]) for i in np.lexsort((shuffle, groups))]


def group_complete(scores: Sequence[float], depth: int) -> bool:
    """Scores sorted descending: the tie group holding item ``depth`` (1-based) ends inside.

    A retriever that returns its top k must fetch further until this holds (or the corpus is
    exhausted), or a tie across the boundary would be broken by whoever the search returned.
    """
    if depth >= len(scores):
        return False
    neighbours = _tied_neighbours(np.asarray(scores, dtype=np.float64))
    return bool((~neighbours[depth - 1 :]).any())


def _rng(seed: int, key: str) -> np.random.Generator:
    digest = hashlib.sha256(f"{seed}\0{key}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "big"))
