def echo(text):
    """Gives ``text`` back; a lone surrogate here ("\udc80") reaches no store raw.

    >>> echo("\udc80") == "\udc80"
    True
    >>> x = "\udc80"
    >>> echo(x) == x
    True
    """
    return text
