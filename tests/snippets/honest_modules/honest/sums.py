"""An honest module: the retrieved text is judged as it stands."""


def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n + 1))
