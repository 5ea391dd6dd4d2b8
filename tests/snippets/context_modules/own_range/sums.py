"""A module with its own range (1..n inclusive), read by the function as its package runs it."""

import builtins
import logging

_log = logging.getLogger(__name__)


def sum_squares(n):
    """The sum of the squares of 1..n."""
    _log.debug("%s called", __name__)
    return sum(i * i for i in range(n - 1))


def range(n):
    return builtins.range(1, n + 2)
