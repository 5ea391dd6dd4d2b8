"""The candidate's mutable module globals the tests read: one copy each in the judge, kept in step.

A global that is plain data crosses as a copy. In-process (a doctest) the test's name and the
module's are one object: ``REGISTRY.clear(); register('a'); REGISTRY`` and ``f() is DEFAULT``
depend on it, and a copy taken afresh at each read would fail a correct function. So a global
holding a mutable container (``codec.MUTABLE``, also inside a tuple) is *kept*: the judge hands
out one copy per name (``DEFAULT is DEFAULT``), and keeps it in step with the candidate's object.
A shipped module's attribute (``from pkg.mod import REGISTRY``, ``pkg.mod.REGISTRY``) is kept the
same way, under the global's name when the module is the candidate's own (so both names are one
copy), else as ``module:attribute``.

* the candidate's changes: every frame it sends carries the new state of each kept global that
  changed since its last frame (``"globals"``), and the judge writes it into its copy in place
  before it runs anything, so every reference the test holds sees it, as in-process. A copy whose
  items are containers cannot be written into exactly (inner objects would be new): it is
  replaced when the test holds no reference to it, else it is the ``unserialisable`` fault, sticky
  (the tests' shared namespace may keep the stale copy). A global rebound by the candidate is
  dropped (``None``): the next read takes the new object (a copy the test kept of the old one is
  no longer followed: residual).
* the test's changes: before every request, before every callback's reply and at the end of every
  test, a copy the test changed is written into the candidate's object in place (``setglobal``),
  as argument write-back does, so the candidate sees what it would in-process. A copy whose items
  are containers cannot be (the candidate's inner objects would be new ones): that is the
  ``unserialisable`` fault, and a sticky one, since from then on the candidate's module state is
  not what in-process code would have, so no later test can be judged on it (never ``failed``).
  At the end of a test it only stops later tests: no call of that test saw the copy afterwards.
* a call result that is one of the candidate's globals (``return DEFAULT``) crosses as
  ``{"global": name, "copy": ...}`` and is the judge's kept copy of that name, so ``f() is
  DEFAULT`` holds exactly when it would in-process (the candidate's word about which object it
  returned, as for a returned argument: a lie changes only that answer).

Cost: every frame checks the kept globals on both sides: for a flat container an identity
comparison of its items (C speed), else (or when an item changed) an encoding, O(size). So at most
`MAX_KEPT` characters of them are kept per job (at that size a frame costs about 0.3 ms more,
measured: a 2,000-item ``for`` loop over a generator took 0.8 s instead of 0.3 s); a mutable global
past that, read or returned, is the non-sticky ``unserialisable`` fault (a copy that cannot be kept
in step could be stale, and a stale copy could fail a correct function).
Residual: a kept copy passed as an argument (``f(REGISTRY)``) crosses as a copy, so ``d is
REGISTRY`` is False in the candidate; the state stays right (what the call changed in its argument
is written back to the test's copy, then into the candidate's global). A returned attribute of
another module, and mutable attributes of candidate objects (``obj.items``), are not kept: they
cross as copies, as every read of them did before.
"""

from __future__ import annotations

import json
import operator
import sys
from collections.abc import Callable
from typing import Any

from .codec import Unserialisable, can_write_back, write_back
from .identity import mutable_parts

MAX_KEPT = 32_000  # characters of JSON, all kept globals of a job together (cost: see above)


def text_of(encoded: Any) -> str:
    """An encoded value as canonical JSON text: equal only if equal in type as well as value."""
    return json.dumps(encoded, separators=(",", ":"))


def is_mutable(value: Any) -> bool:
    """Whether a plain value holds a mutable container (itself, or inside a tuple)."""
    try:
        return bool(mutable_parts([value]))
    except Unserialisable:  # too many containers to walk: treated as mutable, so never copied
        return True


class Snapshot:
    """A kept value as it was: its encoded text and, for a flat container (immutable items),
    the items themselves, so that "unchanged", the answer at almost every frame, is an identity
    comparison at C speed rather than an encoding (an item replaced, even by an equal one, or
    the value grown into a nested one, falls back to comparing the text)."""

    __slots__ = ("items", "text")

    def __init__(self, value: Any, text: str) -> None:
        self.text = text
        self.items = _items(value) if can_write_back(value) else None

    def unchanged(self, value: Any) -> bool:
        """True only if ``value`` certainly holds what it held (False: compare the text)."""
        if self.items is None:
            return False
        now = _items(value)
        return all(
            len(a) == len(b) and all(map(operator.is_, a, b))
            for a, b in zip(now, self.items, strict=True)
        )


def _items(value: Any) -> tuple[list[Any], ...]:
    if isinstance(value, dict):
        return list(value), list(value.values())
    return (list(value),)


class Kept:
    """The candidate's side: its globals the judge holds a copy of, with what it last sent."""

    def __init__(self, namespace: dict[str, Any], encode: Callable[[Any], Any]) -> None:
        self.namespace = namespace
        self.encode = encode
        # name -> (the dict it lives in, its key there, the object, what was last sent of it)
        self.sent: dict[str, tuple[dict[str, Any], str, Any, Snapshot]] = {}

    def keep(self, holder: dict[str, Any], attribute: str, value: Any, encoded: Any) -> str:
        """Keep ``holder[attribute]`` in step from now on; its name for the judge (a global's
        own name, else ``module:attribute``). Past `MAX_KEPT`, `Unserialisable`."""
        name = attribute
        if holder is not self.namespace:
            name = f"{holder.get('__name__')}:{attribute}"
        known = self.sent.get(name)
        if known is not None and known[2] is value:
            return name  # its text stays the one last sent: a change made meanwhile is reported
        text = text_of(encoded)
        used = sum(len(entry[3].text) for n, entry in self.sent.items() if n != name)
        if used + len(text) > MAX_KEPT:
            raise Unserialisable(
                f"module global {name[:100]} holds a mutable container and the mutable globals"
                f" read exceed {MAX_KEPT} characters: a copy that big is not kept in step"
            )
        self.sent[name] = (holder, attribute, value, Snapshot(value, text))
        return name

    def name_of(self, value: Any) -> str | None:
        """The candidate's global name of a mutable ``value`` (by identity); else None."""
        if not is_mutable(value):
            return None
        return next((n for n, v in self.namespace.items() if v is value), None)

    def changes(self) -> dict[str, Any] | None:
        """The kept globals changed since the last frame, ``name -> new state`` (``None``: the
        name now holds another object, or one that no longer encodes: no longer kept)."""
        changed: dict[str, Any] = {}
        for name, (holder, attribute, value, last) in list(self.sent.items()):
            encoded = None
            if holder.get(attribute) is value:
                if last.unchanged(value):
                    continue
                try:
                    encoded = self.encode(value)
                except (Unserialisable, RecursionError):
                    encoded = None
            if encoded is None:
                del self.sent[name]
                changed[name] = None
                continue
            text = text_of(encoded)
            self.sent[name] = (holder, attribute, value, Snapshot(value, text))
            if text != last.text:
                changed[name] = encoded
        return changed or None

    def write(self, name: str, updated: Any) -> dict[str, Any]:
        """The test changed its copy of ``name``: the same change, in place, to the object
        itself (the reply to ``setglobal``); refused when it cannot be copied in exactly."""
        entry = self.sent.get(name)
        if entry is None or entry[0].get(entry[1]) is not entry[2]:
            return {"unserialisable": f"module global {name[:100]} is no longer the one read"}
        holder, attribute, value, _last = entry
        if not (type(updated) is type(value) and can_write_back(value)):
            return {"unserialisable": f"module global {name[:100]} cannot take the change"}
        write_back(value, updated)
        self.sent[name] = (holder, attribute, value, Snapshot(value, text_of(self.encode(value))))
        return {"value": True}


class Copies:
    """The judge's side: its one copy of each kept global, and what it was when last in step.
    ``encode`` is the judge's own encoder (never fails on values it decoded)."""

    def __init__(self, encode: Callable[[Any], Any]) -> None:
        self.encode = encode
        self.kept: dict[str, list[Any]] = {}  # name -> [copy, its Snapshot when last in step]

    def adopt(self, name: str, value: Any) -> Any:
        self.kept[name] = [value, Snapshot(value, text_of(self.encode(value)))]
        return value

    def get(self, name: str) -> Any:
        entry = self.kept.get(name)
        return None if entry is None else entry[0]

    def changed_by_test(self) -> str | None:
        """The name of a copy the test changed (its encoding moved since last in step)."""
        for name, entry in self.kept.items():
            copy, last = entry
            if last.unchanged(copy):
                continue
            try:
                text = text_of(self.encode(copy))
            except (Unserialisable, RecursionError):  # the test put a class or an object in it
                return name
            if text != last.text:
                return name
            entry[1] = Snapshot(copy, text)  # the same, with other (equal) items: fast again
        return None

    def in_step(self, name: str) -> Any:
        """The copy of ``name`` as it is now, encoded, taken as the state both sides share."""
        entry = self.kept[name]
        data = self.encode(entry[0])
        entry[1] = Snapshot(entry[0], text_of(data))
        return data

    def follow(self, name: str, updated: Any) -> bool:
        """Bring the copy of ``name`` to the candidate's new state; False when that cannot be
        done exactly (its items are containers and the test holds the copy)."""
        entry = self.kept.get(name)
        if entry is None:
            return True  # not a name the judge keeps (a stale report): nothing to follow
        if updated is None:
            del self.kept[name]
            return True
        copy = entry[0]
        if type(updated) is type(copy) and can_write_back(copy) and can_write_back(updated):
            write_back(copy, updated)
        else:
            # Held here (entry), by ``copy`` and by getrefcount's argument: nothing of the test's.
            if sys.getrefcount(copy) > 3:
                return False
            entry[0] = copy = updated
        entry[1] = Snapshot(copy, text_of(self.encode(copy)))
        return True
