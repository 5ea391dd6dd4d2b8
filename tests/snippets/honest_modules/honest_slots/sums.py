"""An honest class whose instances have no __dict__ (__slots__)."""


class Summer:
    __slots__ = ("start",)

    def __init__(self):
        self.start = 0

    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return self.start + sum(i * i for i in range(n + 1))
