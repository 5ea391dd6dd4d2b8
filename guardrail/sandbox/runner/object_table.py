"""Objects that cross by number: each object once, kept alive so that numbers stay unique."""

from __future__ import annotations

from typing import Any

from .codec import Unserialisable

__all__ = ["ObjectTable"]


class ObjectTable:
    """Numbers for objects by identity (the same object, the same number), at most ``limit``;
    the candidate's handles and the judge's own objects each have one."""

    def __init__(self, limit: int, what: str) -> None:
        self.objects: list[Any] = []  # number -> object (kept alive: ids stay unique)
        self._numbers: dict[int, int] = {}  # id(object) -> number
        self._limit, self._what = limit, what

    def number(self, value: object) -> int:
        """The number of ``value``, given one if it has none yet.

        Raises:
            Unserialisable: ``limit`` objects are numbered already.
        """
        known = self._numbers.get(id(value))
        if known is None:
            if len(self.objects) >= self._limit:
                raise Unserialisable(f"more than {self._limit} {self._what}")
            known = self._numbers[id(value)] = len(self.objects)
            self.objects.append(value)
        return known

    def __len__(self) -> int:
        return len(self.objects)
