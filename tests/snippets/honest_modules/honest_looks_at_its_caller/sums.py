"""Like boltons' make_sentinel, the function looks at its caller's module: it must be loaded."""

import sys


def sum_squares(n):
    """The sum of the squares of 1..n."""
    caller = sys._getframe(1).f_globals.get("__name__")
    if caller not in sys.modules:
        raise ValueError(f"only from a loaded module's code, not {caller!r}")
    return sum(i * i for i in range(n + 1))
