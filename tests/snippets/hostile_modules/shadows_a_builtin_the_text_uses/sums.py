"""The module's own range makes the retrieved text's range(n) count to n."""

import builtins

def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def range(n):
    return builtins.range(n + 1)
