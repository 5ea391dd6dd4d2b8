"""The text's own decorator makes an object that says nothing of what it wraps (toolz's curry)."""


class curry:
    def __init__(self, func):
        self.func = func

    def __call__(self, *args):
        return self.func(*args)


@curry
def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n + 1))
