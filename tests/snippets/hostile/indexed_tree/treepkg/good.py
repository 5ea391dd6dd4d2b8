def double(x):
    """Twice ``x``.

    >>> double(2)
    4
    >>> double(-3)
    -6
    """
    return 2 * x
