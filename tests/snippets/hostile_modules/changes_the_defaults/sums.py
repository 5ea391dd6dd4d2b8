"""The function object and its code stay; its defaults are not the ones the text writes."""


def sum_squares(n, extra=0):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n + extra))


sum_squares.__defaults__ = (1,)
