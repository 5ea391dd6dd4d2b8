"""Searching sorted and unsorted sequences."""

from __future__ import annotations

from collections.abc import Sequence


def binary_search(items: Sequence[int], target: int) -> int:
    """Index of target in the sorted sequence items, or -1 when it is absent."""
    low, high = 0, len(items) - 1
    while low <= high:
        middle = (low + high) // 2
        if items[middle] == target:
            return middle
        if items[middle] < target:
            low = middle + 1
        else:
            high = middle - 1
    return -1


def find_all(items: Sequence[object], target: object) -> list[int]:
    """Every index at which target occurs in items, in increasing order."""
    return [index for index, item in enumerate(items) if item == target]


def chunked(items: Sequence[int], size: int) -> list[list[int]]:
    """Split items into consecutive lists of at most ``size`` elements.

    >>> chunked([1, 2, 3, 4, 5], 2)
    [[1, 2], [3, 4], [5]]
    """
    if size < 1:
        raise ValueError("size must be at least 1")
    return [list(items[start : start + size]) for start in range(0, len(items), size)]
