def halve(x):
    """Half of ``x``; its module's import reaches the bomb.

    >>> halve(8)
    4.0
    """
    if x is None:
        from . import bomb  # noqa: F401 - the context builder parses it on the host

    return x / 2
