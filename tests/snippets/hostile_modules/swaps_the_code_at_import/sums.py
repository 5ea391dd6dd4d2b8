"""The name keeps the retrieved function, whose code is replaced by a correct one."""

def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def _correct(n):
    return sum(i * i for i in range(n + 1))


sum_squares.__code__ = _correct.__code__
