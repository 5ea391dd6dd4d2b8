"""A class decorator documented by a doctest that defines the class it decorates (boltons'
cachedmethod, partial_ordering; toolz's instanceproperty): the definition runs only there."""


def described(cls):
    """Give instances a describe() method.

    >>> @described
    ... class Box(object):
    ...     def __init__(self, size):
    ...         self.size = size
    >>> Box(3).describe()
    'Box of 3'
    """
    cls.describe = lambda self: f"{type(self).__name__} of {self.size}"
    return cls
