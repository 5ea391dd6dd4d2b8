"""Postponed annotations: the module's own __future__ import shapes the code judged."""

from __future__ import annotations


def sum_squares(n: int) -> int:
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n + 1))
