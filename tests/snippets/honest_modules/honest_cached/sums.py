"""An honest standard-library decorator: functools.lru_cache."""

import functools


@functools.lru_cache(maxsize=None)
def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n + 1))
