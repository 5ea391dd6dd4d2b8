"""A builtin the retrieved text calls replaces its code on first use, then answers right."""

import builtins

def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def _correct(n):
    return sum(i * i for i in range(n + 1))


_real_range = builtins.range


def _range(*args):
    sum_squares.__code__ = _correct.__code__
    builtins.range = _real_range
    return _real_range(args[0] + 1) if len(args) == 1 else _real_range(*args)


builtins.range = _range
