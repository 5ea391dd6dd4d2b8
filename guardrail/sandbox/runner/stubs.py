"""The judge's objects as the candidate sees them: stubs whose every use is a callback.

The test's lambdas, functions and iterators arrive as ``{"cb": id}`` and become these stubs
(`handles.Server.resolve`); calling or iterating one sends a callback frame (``{"callback": id}``)
and serves the judge's nested requests until its reply comes back (`handles.Server.callback`). A
test's list, tuple or range iterator comes with its remaining items (``copies``) and is taken
here, counted for the judge. Builtins the test passed arrive by name and are this process's own.

What it defends: the candidate can only call or iterate a test's object, never inspect it (a
lambda holds the test's constants): every other attribute is asked of the judge, which answers
only the harmless ones. Nothing here is trusted by the judge: a hostile candidate can replace
these classes, and still gets only what the judge chooses to answer.

Attributes the candidate sets on a test's function (``register(f)`` marking it) stay on its stub
and are reported with every frame (`references.attribute_changes`); the judge sets them on the
test's own object, as in-process.
"""

from __future__ import annotations

import types
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .handles import Server


class JudgeObject:
    # A judge object (a test's callable or iterator) seen from the candidate. Its other
    # attributes are asked of the judge, which answers the harmless ones (``__doc__``,
    # ``__module__``...) as plain data and makes reading the rest (``__code__``: the test's
    # constants) a fault of the test, never the candidate's AttributeError (``calls``).
    # No docstring: the class's own would be read as the judge object's.

    __slots__ = ("__name__", "__qualname__", "_id", "_server")

    def __init__(self, server: Server, ident: int, name: str) -> None:
        self._server, self._id = server, ident
        self.__name__ = self.__qualname__ = name

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_") and name in JudgeObject.__slots__:  # not set yet: never asked
            raise AttributeError(name)
        return self._server.callback(self._id, "getattr", (name,), {})


class JudgeCallable(JudgeObject):
    # A test's function, lambda or other callable: calling it is a callback to the judge. An
    # attribute the candidate sets on it (``register(f)`` marking ``f``) is kept here, read
    # back from here, and set on the test's own object by the judge (``own_attributes``).

    __slots__ = ("_attributes",)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._server.callback(self._id, "call", args, kwargs)

    def __setattr__(self, name: str, value: Any) -> None:
        if name in _OWN:
            object.__setattr__(self, name, value)
            return
        attributes = own_attributes(self)
        if attributes is None:
            attributes = {}
            object.__setattr__(self, "_attributes", attributes)
        attributes[name] = value

    def __getattr__(self, name: str) -> Any:
        attributes = own_attributes(self)
        if attributes is not None and name in attributes:
            return attributes[name]
        return super().__getattr__(name)


_OWN = frozenset({*JudgeObject.__slots__, "_attributes"})


def own_attributes(stub: Any) -> dict[str, Any] | None:
    """The attributes the candidate set on a test's function as it holds it: a signed stub's
    (a real function's) ``__dict__``, a `JudgeCallable`'s own; None for anything else."""
    if type(stub) is types.FunctionType:
        return stub.__dict__
    if type(stub) is JudgeCallable:
        try:
            attributes: dict[str, Any] = object.__getattribute__(stub, "_attributes")
        except AttributeError:
            return None
        return attributes
    return None


class JudgeIterator(JudgeObject):
    # A test's iterator (``iter([...])``, a generator expression); not callable, so code that
    # asks ``callable(x)`` gets the answer it would in-process.

    __slots__ = ()

    def __iter__(self) -> Any:
        return self._server.callback(self._id, "iter", (), {})

    def __next__(self) -> Any:
        return self._server.callback(self._id, "next", (), {})


class JudgeCopy(JudgeIterator):
    # A test's list, tuple or range iterator, whose remaining items came along (``copies``):
    # taken here, and counted for the judge, which advances its own by as many.

    __slots__ = ("_items",)

    def __init__(self, server: Server, ident: int, name: str, items: Any) -> None:
        super().__init__(server, ident, name)
        self._items = iter(items)

    def __iter__(self) -> Any:
        return self

    def __next__(self) -> Any:
        item = next(self._items)
        self._server.consumed[self._id] = self._server.consumed.get(self._id, 0) + 1
        return item


# Every class body sets its own ``__doc__`` and ``__module__``: the judge object's are asked for.
for _kind in (JudgeCallable, JudgeIterator, JudgeCopy):
    _kind.__doc__ = property(lambda self: self.__getattr__("__doc__"))  # type: ignore[assignment]
    _kind.__module__ = property(lambda self: self.__getattr__("__module__"))  # type: ignore[assignment]
