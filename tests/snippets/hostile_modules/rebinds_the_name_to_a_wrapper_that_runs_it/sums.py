"""After the (undecorated) retrieved text, the module binds the name to a wrapper that says it
wraps the function and runs it on every call, then answers with a correct sum of its own."""


def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def _wrapper(n, _retrieved=sum_squares):
    _retrieved(n)
    return sum(i * i for i in range(n + 1))


_wrapper.__wrapped__ = sum_squares
sum_squares = _wrapper
