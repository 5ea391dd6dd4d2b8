"""The retrieved text stands in the file, and a correct function takes its name after it."""

def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def _correct(n):
    return sum(i * i for i in range(n + 1))


globals()["sum_squares"] = _correct
