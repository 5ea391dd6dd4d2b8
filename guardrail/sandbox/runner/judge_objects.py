"""The judge's own objects the candidate may hold: a table by id, and their reference forms.

`JudgeObjects` is the judge's table of its own objects the candidate may run: a test's callables
and iterators cross as ``{"cb": id}``, and the candidate can call or iterate them and read their
name, qualname, module, docstring, ``__dict__`` and ``__annotations__`` as plain data; any other
attribute it reads (a lambda's ``__code__`` holds the test's constants) is the test's fault
(``calls.Calls._attribute``); a plain function crosses with its parameters, so the candidate's
``inspect.signature`` of it works (`signatures`). A class (not a builtin one) never crosses: the
candidate's ``issubclass``/``__subclasses__`` would need the class itself (``unserialisable``). A
bare ``object()`` (a sentinel) crosses as an ``object()`` of the candidate's own, given back as the
test's. Builtins (and ``operator``, ``math``,
``collections``... names) cross by name and the candidate uses its own.
"""

from __future__ import annotations

import builtins
import collections
import math
import operator
from typing import Any

from .codec import Unserialisable
from .copies import Copies
from .object_table import ObjectTable
from .remote import is_remote, reference_of
from .signatures import describe

__all__ = ["MAX_JUDGE_OBJECTS", "JudgeObjects"]

MAX_JUDGE_OBJECTS = 100_000
_BUILTIN_SOURCES = (builtins, operator, math, collections)


class JudgeObjects:
    """The judge's own objects the candidate holds references to, by id (kept alive)."""

    def __init__(self) -> None:
        self.table = ObjectTable(MAX_JUDGE_OBJECTS, "judge objects crossed")
        self.builtin_names: dict[int, tuple[str, Any]] | None = None  # built when first needed
        self.sent_builtins: dict[str, Any] = {}  # builtins sent by name, by that name
        self.shapes: dict[int, dict[str, Any] | None] = {}  # object id -> its `describe`
        self.copies = Copies()

    def reference(self, value: object) -> Any:
        """The reference form of a judge value that is not plain data (the codec's hook)."""
        if is_remote(value):
            return reference_of(value)
        if self.builtin_names is None:
            self.builtin_names = _builtin_names()  # about 1 ms: not for jobs of plain data
        name = self.builtin_names.get(id(value))
        if name is not None and name[1] is value:
            self.sent_builtins[name[0]] = value  # the candidate may name it back (`get`)
            return {"builtin": name[0]}
        iterator = hasattr(type(value), "__next__")
        if isinstance(value, type):  # the candidate would get a stand-in that is not a class
            raise Unserialisable(
                f"the class {value.__qualname__[:100]} (not a builtin one) cannot cross: the"
                " candidate's issubclass, isinstance and __subclasses__ need the class itself"
            )
        token = type(value) is object  # a bare ``object()``: a sentinel, nothing in it to read
        if not (callable(value) or iterator or token):
            raise Unserialisable(
                f"a value of type {type(value).__qualname__} cannot cross as plain data"
            )
        known = self.table.number(value)
        items = self.copies.items_to_send(known, value) if iterator else None
        name_of = getattr(value, "__name__", "")
        name_of = name_of if type(name_of) is str else ""
        ref: dict[str, Any] = {"cb": known, "name": name_of, "iterator": iterator}
        if token:  # the candidate holds an ``object()`` of its own for it, given back as this
            return {**ref, "token": True}
        if not iterator and known not in self.shapes:  # once per object: it crosses often
            self.shapes[known] = describe(value)
        shape = None if iterator else self.shapes[known]
        if shape is not None:  # the candidate builds a function of the same parameters
            ref["signature"] = shape
        return ref if items is None else {**ref, "items": items}

    def get(self, ident: Any) -> Any:
        if type(ident) is not int or not 0 <= ident < len(self.table):
            raise ValueError("no such judge object")
        return self.table.objects[ident]

    def builtin(self, name: Any) -> Any:
        """A builtin the candidate names back: only one the judge sent it by that name."""
        if type(name) is not str or name not in self.sent_builtins:
            raise ValueError("a builtin the judge never sent")
        return self.sent_builtins[name]


def _builtin_names() -> dict[int, tuple[str, Any]]:
    """``id -> ("module:qualname", object)`` for the public functions and types of the builtin
    modules and the methods of the builtin types (``str.lower``), which cross by name."""
    names: dict[int, tuple[str, Any]] = {}
    for module in _BUILTIN_SOURCES:
        for attribute, value in vars(module).items():
            if attribute.startswith("_") or not callable(value):
                continue
            names.setdefault(id(value), (f"{module.__name__}:{attribute}", value))
            if module is builtins and isinstance(value, type):
                for method, member in vars(value).items():
                    if not method.startswith("_") and callable(member):
                        key = f"builtins:{attribute}.{method}"
                        names.setdefault(id(member), (key, member))
    return names
