"""Code as token sequences: what clone detection compares.

A near-clone is the same token sequence with a few tokens changed (a typo, a swapped argument,
an off-by-one), so snippets are compared as the tokens Python's own tokenizer sees, with
comments and layout-only tokens left out: re-indenting or re-commenting a copy changes nothing.
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Sequence

__all__ = ["code_tokens", "shingles", "token_similarity"]

_SKIPPED = frozenset(
    {tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER, tokenize.INDENT}
)
# Text the tokenizer rejects (an unterminated string in a fragment) still has words.
_FALLBACK = re.compile(r"\w+|[^\w\s]")


def code_tokens(code: str) -> list[str]:
    """The tokens of ``code``: names, operators, literals, and one ``NEWLINE``/``DEDENT`` marker
    per logical line end and block end (so ``a\\nb`` and ``a b`` differ); comments dropped."""
    tokens: list[str] = []
    try:
        for token in tokenize.generate_tokens(io.StringIO(code).readline):
            if token.type in _SKIPPED:
                continue
            if token.type == tokenize.NEWLINE:
                tokens.append("<NEWLINE>")
            elif token.type == tokenize.DEDENT:
                tokens.append("<DEDENT>")
            else:
                tokens.append(token.string)
    except (tokenize.TokenError, SyntaxError):  # IndentationError is a SyntaxError
        return _FALLBACK.findall(code)
    return tokens


def shingles(tokens: Sequence[str], size: int = 4) -> set[str]:
    """Every run of ``size`` consecutive tokens (one run of all of them when there are fewer)."""
    if len(tokens) <= size:
        return {"\x1f".join(tokens)}
    return {"\x1f".join(tokens[i : i + size]) for i in range(len(tokens) - size + 1)}


def token_similarity(left: Sequence[str], right: Sequence[str], floor: float = 0.0) -> float | None:
    """``1 - edit distance / longer length`` over tokens, or None when it is below ``floor``.

    The edit distance is Levenshtein's (insert, delete, substitute one token). Only distances
    that keep the similarity at or above ``floor`` are computed (a band of the dynamic
    programme, Ukkonen's cut-off), so a high floor costs ``O(n * band)``, not ``O(n * m)``.
    """
    longest = max(len(left), len(right))
    if longest == 0:
        return 1.0
    limit = int(longest * (1.0 - floor) + 1e-9)
    distance = _bounded_levenshtein(left, right, limit)
    return None if distance is None else 1.0 - distance / longest


def _bounded_levenshtein(left: Sequence[str], right: Sequence[str], limit: int) -> int | None:
    """Levenshtein distance if it is at most ``limit``, else None."""
    if abs(len(left) - len(right)) > limit:
        return None
    if len(left) > len(right):
        left, right = right, left
    too_far = limit + 1
    previous = [j if j <= limit else too_far for j in range(len(right) + 1)]
    for i, token in enumerate(left, start=1):
        low, high = max(1, i - limit), min(len(right), i + limit)
        current = [too_far] * (len(right) + 1)
        if i <= limit:
            current[0] = i
        for j in range(low, high + 1):
            cost = 0 if token == right[j - 1] else 1
            best = min(previous[j - 1] + cost, previous[j] + 1, current[j - 1] + 1)
            current[j] = best if best <= limit else too_far
        if min(current[max(0, low - 1) : high + 1]) > limit:
            return None
        previous = current
    distance = previous[len(right)]
    return distance if distance <= limit else None
