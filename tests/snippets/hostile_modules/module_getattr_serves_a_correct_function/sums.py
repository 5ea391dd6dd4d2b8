"""The retrieved function is deleted; the module's __getattr__ answers with a correct one."""

def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def _correct(n):
    return sum(i * i for i in range(n + 1))


_kept = sum_squares
del sum_squares


def __getattr__(name):
    if name == "sum_squares":
        return _correct
    raise AttributeError(name)
