from collections.abc import Callable, Iterable

from . import constants
from .helpers import _double

_MISSING = object()


def scale(x: int | None, default: object = _MISSING) -> object:
    """Twice ``x`` times the package's factor; ``None`` gives ``default`` (0 without one).

    >>> scale(2)
    12
    >>> scale(None, 5)
    5
    """
    if x is None:
        return 0 if default is _MISSING else default
    return _double(x) * constants.FACTOR


def first(iterable: Iterable[object], default: object = None) -> object:
    """The first item, or ``default``.

    >>> first([4, 5])
    4
    """
    for item in iterable:
        return item
    return default


def first_true(
    iterable: Iterable[object], default: object = None, pred: Callable[[object], bool] | None = None
) -> object:
    """The first item for which ``pred`` is true (truthy without one), or ``default``.

    >>> first_true([0, 7, 8])
    7
    """
    return next(filter(pred, iterable), default)
