"""Wrappers that take their docstrings, and so their doctests, from another module of the
package, as toolz.curried does (``merge.__doc__ = toolz.merge.__doc__``)."""

from collections.abc import Iterable

import ctxpkg

from . import tools


def scale(x: int | None, default: object = None) -> object:
    return ctxpkg.scale(x) if default is None else ctxpkg.scale(x, default)


def first(iterable: Iterable[object]) -> object:
    return tools.first(iterable)


scale.__doc__ = ctxpkg.scale.__doc__
first.__doc__ = tools.first.__doc__
