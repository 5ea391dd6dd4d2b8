"""An honest dataclass whose method reads a functools.cached_property of the instance (it
stores its value in the instance's __dict__, under its own name)."""

import dataclasses
import functools


@dataclasses.dataclass
class Summer:
    start: int = 0

    @functools.cached_property
    def offset(self):
        return self.start

    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return self.offset + sum(i * i for i in range(n + 1))
