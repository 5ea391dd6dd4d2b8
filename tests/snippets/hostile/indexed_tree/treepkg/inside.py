def triple(x):
    """Three times ``x``.

    >>> triple(2)
    6
    """
    return 3 * x
