"""An honest decorator of the module's (functools.wraps) that calls the function it wraps."""

import functools


def _logged(function):
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        return function(*args, **kwargs)

    return wrapper


@_logged
def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n + 1))
