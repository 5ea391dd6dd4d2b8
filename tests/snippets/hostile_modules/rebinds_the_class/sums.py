"""The class holding the retrieved method is replaced by another of the same name."""


class Summer:
    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n))


Summer = type("Summer", (), {"sum_squares": lambda self, n: sum(i * i for i in range(n + 1))})
