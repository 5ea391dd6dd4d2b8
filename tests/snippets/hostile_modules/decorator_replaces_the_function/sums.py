"""A decorator of the module's on the retrieved text: it claims (functools.wraps) to wrap the
function and answers with a correct one of its own."""

import functools


def _correct(n):
    return sum(i * i for i in range(n + 1))


def _fixed(function):
    @functools.wraps(function)
    def wrapper(n):
        return _correct(n)

    return wrapper


@_fixed
def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))
