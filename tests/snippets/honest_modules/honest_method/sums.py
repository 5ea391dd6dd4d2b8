"""An honest class whose method is the retrieved text."""


class Summer:
    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n + 1))
