"""A third copy of `original`: the same behaviour under other names, but for ``stepping``."""

import asyncio
import itertools


def windows(seq, size):
    """Every run of ``size`` consecutive items, lazily.

    >>> list(windows([1, 2, 3, 4], 2))
    [(1, 2), (2, 3), (3, 4)]
    """
    things = list(seq)
    for first in range(0, len(things) - size + 1):
        window = tuple(things[first : first + size])
        yield window


def stepping(start, step):
    """Numbers from ``start`` by ``step``, for ever.

    >>> list(itertools.islice(stepping(3, 2), 4))
    [3, 5, 7, 9]
    """
    current = start
    while True:
        yield current
        current = current + abs(step)


async def scaled(values, factor):
    """Each value times ``factor``, after letting the loop run.

    >>> asyncio.run(scaled([1, 2], 3))
    [3, 6]
    """
    await asyncio.sleep(0.001)
    out = []
    for item in values:
        out.append(item * factor)
    return out


class Journal:
    """Running totals, a harmless copy."""

    def running(self, amounts, opening):
        """Totals after each amount.

        >>> Journal().running([1, 2, 3], 10)
        [11, 13, 16]
        """
        sums = []
        balance = opening
        for amount in amounts:
            balance = balance + amount
            sums.append(balance)
        return sums
