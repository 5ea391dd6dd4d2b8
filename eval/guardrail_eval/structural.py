"""The structural baseline: a picker that never runs code, and why it scores so well here.

A mutation pool has a shape: every distractor is one edit away from its canonical, so among a
query's near-clones the canonical is the edit-distance centre (each mutant is one edit from the
canonical and two from the other mutants). `structural_order` exploits exactly that:

1. tokenize the top ``fetch_k`` retrieved snippets (Python tokens; comments and blank lines
   dropped) and take the top hit's **near-clone family**: the snippets within
   ``max(FAMILY_MIN_EDITS, FAMILY_SHARE x its length)`` token edits of the top hit (itself
   included);
2. hand over the family's **medoid** (the member with the least total token edit distance to the
   others; ties go to the better retrieval rank) first, then everything else in retrieval order.

It is not verification: nothing is run, no test is read. It measures how much of a gate's score
a pool gives away through its shape; on a pool of real code, whose distractors are not all
mutants of one canonical, it should fall back towards the ungated ranking.
"""

from __future__ import annotations

import io
import math
import tokenize
from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "FAMILY_MIN_EDITS",
    "FAMILY_RULE",
    "FAMILY_SHARE",
    "STRUCTURAL_CAPTION",
    "code_token_ids",
    "family_limit",
    "near_clone_distances",
    "structural_order",
    "token_edit_distance",
]

FAMILY_MIN_EDITS = 4
FAMILY_SHARE = 0.3
STRUCTURAL_CAPTION = (
    "structural: a picker that never runs code. From the top fetch_k it takes the top hit's"
    " near-clone family (snippets within a few token edits of it) and hands over the family's"
    " edit-distance centre first. It exploits the pool's shape (distractors that are near"
    " clones of their canonical make the canonical the centre); it is not verification."
)
FAMILY_RULE = f"within max({FAMILY_MIN_EDITS}, {FAMILY_SHARE:.0%} of its tokens) token edits"
_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER}


def code_token_ids(code: str, vocabulary: dict[str, int]) -> NDArray[np.int64]:
    """The code's Python tokens as ids of ``vocabulary`` (extended with new tokens).

    Text that does not tokenize (not Python, unbalanced brackets) falls back to its
    whitespace-separated words, so every snippet has a distance to every other.
    """
    try:
        words = [
            token.string
            for token in tokenize.generate_tokens(io.StringIO(code).readline)
            if token.type not in _SKIPPED
        ]
    except (tokenize.TokenError, SyntaxError):
        words = code.split()
    return np.array([vocabulary.setdefault(word, len(vocabulary)) for word in words], np.int64)


def token_edit_distance(a: NDArray[np.int64], b: NDArray[np.int64]) -> int:
    """Levenshtein distance between two token sequences (unit insert, delete, substitute).

    One row at a time, vectorised: a row's insertions are a running minimum (`cummin` of
    ``row - j``), so the cost is one numpy pass per token of ``a``.
    """
    if a.size < b.size:
        a, b = b, a
    if b.size == 0:
        return int(a.size)
    offsets = np.arange(b.size + 1, dtype=np.int64)
    previous = offsets.copy()
    for i, token in enumerate(a, start=1):
        diagonal = previous[:-1] + (b != token)
        best = np.empty_like(previous)
        best[0] = i
        best[1:] = np.minimum(previous[1:] + 1, diagonal)
        previous = np.minimum.accumulate(best - offsets) + offsets
    return int(previous[-1])


def family_limit(size: int) -> int:
    """The most token edits a near clone of a snippet of ``size`` tokens may be from it."""
    return max(FAMILY_MIN_EDITS, math.ceil(FAMILY_SHARE * size))


def near_clone_distances(pairs: Iterable[tuple[str, str]]) -> list[tuple[int, int]]:
    """For each ``(canonical, distractor)`` pair, the token edit distance between them and the
    family limit of the canonical (`family_limit`): a distractor is a near clone when the first
    is at most the second."""
    found = []
    for canonical, distractor in pairs:
        vocabulary: dict[str, int] = {}
        a, b = code_token_ids(canonical, vocabulary), code_token_ids(distractor, vocabulary)
        found.append((token_edit_distance(a, b), family_limit(a.size)))
    return found


def structural_order(codes: Sequence[str]) -> list[int]:
    """Indices of ``codes`` (in retrieval order) as the structural picker hands them over."""
    if not codes:
        return []
    vocabulary: dict[str, int] = {}
    tokens = [code_token_ids(code, vocabulary) for code in codes]
    limit = family_limit(tokens[0].size)
    family = [0] + [
        i for i in range(1, len(codes)) if token_edit_distance(tokens[0], tokens[i]) <= limit
    ]
    totals = dict.fromkeys(family, 0)
    for position, i in enumerate(family):
        for j in family[position + 1 :]:
            distance = token_edit_distance(tokens[i], tokens[j])
            totals[i] += distance
            totals[j] += distance
    medoid = min(family, key=lambda i: (totals[i], i))
    return [medoid, *(i for i in range(len(codes)) if i != medoid)]
