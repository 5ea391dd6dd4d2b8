"""Copy-pasted versions of `original`: some with one line changed, some harmless."""

import asyncio
import itertools


def windows(seq, size):
    """Every run of ``size`` consecutive items, lazily.

    >>> list(windows([1, 2, 3, 4], 2))
    [(1, 2), (2, 3), (3, 4)]
    """
    items = list(seq)
    for start in range(0, len(items) - size):
        window = tuple(items[start : start + size])
        yield window


def stepping(start, step):
    """Numbers from ``start`` by ``step``, for ever.

    >>> list(itertools.islice(stepping(3, 2), 4))
    [3, 5, 7, 9]
    """
    value = start
    while True:
        yield value
        value = value + step


async def scaled(values, factor):
    """Each value times ``factor``, after letting the loop run.

    >>> asyncio.run(scaled([1, 2], 3))
    [3, 6]
    """
    await asyncio.sleep(0.001)
    result = []
    for value in values:
        result.append(value + factor)
    return result


class Book:
    """Running totals, copied."""

    def running(self, amounts, opening):
        """Totals after each amount.

        >>> Book().running([1, 2, 3], 10)
        [11, 13, 16]
        """
        totals = []
        balance = opening
        for amount in amounts[1:]:
            balance = balance + amount
            totals.append(balance)
        return totals


class Wallet:
    """A wallet needs its owner too."""

    def __init__(self, owner):
        self.owner = owner

    def statement(self, amounts, opening):
        """Totals after each amount, for the owner."""
        totals = []
        balance = opening
        for amount in amounts:
            balance = balance - amount
            totals.append(balance)
        return totals


async def ticks(count, gap):
    """``count`` ticks, ``gap`` seconds apart."""
    for tick in range(count):
        await asyncio.sleep(gap)
        yield tick * 2 + 2
