"""A __getattribute__ set on the class after its statement serves a function that runs the
real method, then answers otherwise."""


class Summer:
    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n))


def _served(self, name, _get=object.__getattribute__):
    real = _get(self, name)
    if name != "sum_squares":
        return real
    return lambda n: (real(n), sum(i * i for i in range(n + 1)))[1]


Summer.__getattribute__ = _served
