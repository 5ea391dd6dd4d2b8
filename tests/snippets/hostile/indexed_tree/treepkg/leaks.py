import sys


def leak():
    """Prints every module shipped with it, then imports the planted links.

    >>> leak()
    'sealed'
    """
    print(sys.modules[__name__].__loader__.modules)
    from . import secret  # noqa: F401 - a link to a host file
    from .linked import mod  # noqa: F401 - a link to a host folder

    return "sealed"
