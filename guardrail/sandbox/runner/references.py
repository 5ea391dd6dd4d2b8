"""The candidate's side of references: how its objects become handles, and what the judge's
references (its callables, iterators, sentinels, builtins) become here.

Functions of `handles.Server`, as methods. A candidate object is kept in the server's table and
crosses as ``{"handle": id, "type": name, "of": <its class>}``; the same object always gets the
same id. The judge's objects arrive as ``{"cb": id, ...}`` and become stubs (`stubs`), a function
of the same parameters (`signatures`), or an ``object()``; these,
and builtins the judge sent by name, go back as the reference the judge sent.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .codec import Unserialisable, canonical_text, decode
from .signatures import signed_stub
from .stubs import JudgeCallable, JudgeCopy, JudgeIterator, JudgeObject, own_attributes

if TYPE_CHECKING:
    from .handles import Server

__all__ = [
    "BUILTIN_MODULES",
    "MAX_HANDLES",
    "attribute_changes",
    "handle",
    "handle_of",
    "keep",
    "resolve",
    "stub",
]

MAX_HANDLES = 100_000
# Builtins a test passes cross by name; these modules are the ones they may come from.
BUILTIN_MODULES = frozenset(
    {"builtins", "operator", "math", "string", "functools", "itertools", "collections"}
)


def handle_of(self: Server, value: object) -> Any:
    """The reference form of a value that is not plain data (the codec's ``other`` hook)."""
    if isinstance(value, JudgeObject):
        return {
            "cb": value._id,
            "name": value.__name__,
            "iterator": type(value) is JudgeIterator,
        }
    sent = self.echoed.get(id(value))
    if sent is not None and sent[0] is value:  # the test's function or builtin, given back
        return sent[1]  # as the judge described it: an unchanged argument compares equal
    return handle(self, value)


def handle(self: Server, value: object) -> dict[str, Any]:
    """``value`` as a handle, with its class (a handle too, even a builtin one)."""
    kind = type(value)
    description: dict[str, Any] = {"handle": keep(self, value), "type": kind.__name__[:100]}
    if isinstance(value, type):  # a class: the judge's stand-in for it is a class too
        calls = any("__call__" in vars(klass) for klass in value.__mro__)
        binds = any("__get__" in vars(klass) for klass in value.__mro__)
        description["class"] = {"name": value.__name__[:100], "calls": calls, "binds": binds}
    else:  # its class crosses with it, so that ``type(a) is type(b)`` holds in the judge
        description["of"] = handle(self, kind)
    return description


def keep(self: Server, value: object) -> int:
    """The handle id of ``value``, kept alive in the table (the same object, the same id)."""
    return self.handles.number(value)


def resolve(self: Server, ref: dict[str, Any]) -> Any:
    """The object a reference form names (the codec's ``ref`` hook)."""
    if "handle" in ref:
        return self.handles.objects[int(ref["handle"])]
    if "global" in ref:
        name = str(ref["global"])
        if name not in self.namespace:
            raise NameError(f"name {name!r} is not defined", name=name)
        return self.namespace[name]
    if "cb" in ref:
        ident = int(ref["cb"])
        held = self.stubs.get(ident)
        if isinstance(held, JudgeCopy) and "items" in ref:  # the test took some itself
            held._items = iter(decode(ref["items"]))
        if held is None:
            held = self.stubs[ident] = stub(self, ident, ref)
            if not isinstance(held, JudgeObject):
                self.echoed[id(held)] = (held, ref)
        return held
    module, _, qualname = str(ref["builtin"]).partition(":")
    if module not in BUILTIN_MODULES:
        raise ValueError(f"not a builtin module: {module!r}")
    value: Any = importlib.import_module(module)
    for part in qualname.split("."):
        value = getattr(value, part)
    self.echoed[id(value)] = (value, ref)
    return value


def stub(self: Server, ident: int, ref: dict[str, Any]) -> Any:
    """What the candidate holds for the test's object ``ident`` (see `stubs`)."""
    name = str(ref.get("name", ""))
    if "items" in ref:
        return JudgeCopy(self, ident, name, decode(ref["items"]))
    if ref.get("iterator"):
        return JudgeIterator(self, ident, name)
    if ref.get("token") is True:  # the test's bare object(): one of ours stands for it
        return object()
    shape = ref.get("signature")
    if type(shape) is dict:
        function = signed_stub(
            shape,
            name,
            lambda args, kwargs: self.callback(ident, "call", args, kwargs),
            lambda: self.callback(ident, "getattr", ("__defaults__",), {}),
        )
        if function is not None:
            return function
    return JudgeCallable(self, ident, name)


def attribute_changes(self: Server) -> list[list[Any]]:
    """``[ident, name, value]`` for each attribute the candidate set (or set anew) on a test's
    function since the last frame (`stubs.own_attributes`), for the judge to set on its own.
    Dunder names stay here (``__wrapped__`` and the like would change how the judge sees the
    test's function); so does a value that cannot cross."""
    changes: list[list[Any]] = []
    for ident, held in self.stubs.items():
        attributes = own_attributes(held)
        if not attributes:
            continue
        reported = self.reported.setdefault(ident, {})
        for name, value in list(attributes.items()):
            if type(name) is not str or name.startswith("__"):
                continue
            try:
                encoded = self.out_value(value)
            except Unserialisable:
                continue
            text = canonical_text(encoded)
            if reported.get(name) != text:
                reported[name] = text
                changes.append([ident, name, encoded])
    return changes
