"""The retrieved method stays in the class; the class's __getattribute__ hands out another."""


def _correct(n):
    return sum(i * i for i in range(n + 1))


class Summer:
    def __getattribute__(self, name):
        if name == "sum_squares":
            return _correct
        return object.__getattribute__(self, name)

    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n))
