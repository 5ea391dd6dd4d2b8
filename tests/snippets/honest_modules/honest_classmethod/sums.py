"""An honest classmethod: read of an instance, it is bound to the class."""


class Summer:
    power = 2

    @classmethod
    def sum_squares(cls, n):
        """The sum of the squares of 1..n."""
        return sum(i**cls.power for i in range(n + 1))
