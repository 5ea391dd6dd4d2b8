"""A test's iterator over plain data, sent to the candidate as a copy rather than item by item.

A test that passes ``iter([...])``, ``iter((...))`` or ``iter(range(...))`` (a list, tuple or range
iterator of the judge's) would cost the candidate one callback per item it takes (a million-item
``ilen`` timed out). Its remaining items are plain data the judge can read without advancing it
(``__reduce__``), so they cross with the reference and the candidate iterates its own copy (sent
again if the test took items of its iterator itself in between). Every frame the candidate sends
says how many items it took of each copy since the last (``"consumed"``), and the judge advances its
own iterator by as many before it runs anything (a callback, the rest of the test): the test sees
its iterator where the candidate left it, as in-process. Each item the judge's iterator yields must
be the one it sent (the same object; for a range, the same int): a list the test changed while the
candidate held its iterator is a ``unserialisable`` fault, never a silently different answer. Only
immutable items are copied (a copied list inside would hide the candidate's changes to it), and at
most `MAX_COPIED` of them; anything else stays a callback. Generators (a test's ``(x for x in
...)``) are never copied: their items may have effects the candidate must see in order.
"""

from __future__ import annotations

from typing import Any

from .codec import MUTABLE, Unserialisable, encode

MAX_COPIED = 100_000
_COPIED: tuple[type, ...] = (type(iter(range(0))), type(iter(())), type(iter([])))


def remaining(value: object) -> Any:
    """The items a list, tuple or range iterator has left, as a list or range; else None."""
    if not any(type(value) is kind for kind in _COPIED):
        return None
    reduced: Any = value.__reduce__()
    if len(reduced) < 3:  # exhausted: reduced to an empty sequence
        return []
    sequence, index = reduced[1][0], reduced[2]
    if type(sequence) is range:
        return sequence[index:]
    items = list(sequence[index:])
    if len(items) > MAX_COPIED or not all(_immutable(item) for item in items):
        return None
    return items


def encoded(items: Any) -> Any:
    """``items`` as plain data, or None when they are not all plain data."""
    try:
        return encode(items)
    except (Unserialisable, RecursionError):
        return None


class Copies:
    """The judge's iterators the candidate holds copies of: how far each has been taken."""

    def __init__(self) -> None:
        self.sent: dict[int, tuple[Any, Any]] = {}  # cb id -> (the judge's iterator, its items)
        self.taken: dict[int, int] = {}

    def items_to_send(self, ident: int, iterator: Any) -> Any:
        """The encoded items to send with the reference to judge object ``ident``: when it is
        a list, tuple or range iterator crossing for the first time, or again after the test
        took items of it itself (the candidate's copy then starts over from where it is)."""
        if ident in self.sent and self.taken[ident] == len(self.sent[ident][1]) - _left(iterator):
            return None  # the candidate's copy is where the judge's iterator is
        left = remaining(iterator)
        data = None if left is None else encoded(left)
        if data is not None:
            self.sent[ident] = (iterator, left)
            self.taken[ident] = 0
        return data

    def advance(self, consumed: Any) -> str | None:
        """Take from the judge's iterators what the candidate took of its copies; a problem
        (what the candidate says, or a test's list that changed) as a message, else None."""
        if consumed is None:
            return None
        if type(consumed) is not dict:
            return "malformed"
        for key, count in consumed.items():
            ident = int(key) if type(key) is str and key.isdigit() else -1
            if ident not in self.sent or type(count) is not int or count < 0:
                return "malformed"
            iterator, items = self.sent[ident]
            start = self.taken[ident]
            if start + count > len(items):
                return "malformed"
            for expected in items[start : start + count]:
                got = next(iterator, _END)
                if not (
                    got is expected or (type(got) is int is type(expected) and got == expected)
                ):
                    return "changed"
            self.taken[ident] = start + count
        return None


_END = object()


def _left(iterator: Any) -> int:
    left = remaining(iterator)
    return -1 if left is None else len(left)


def _immutable(value: Any) -> bool:
    if type(value) in (tuple, frozenset):
        return all(_immutable(item) for item in value)
    return type(value) not in MUTABLE
