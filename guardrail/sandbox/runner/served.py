"""What the judge does for the candidate while it waits, and how it drains a candidate iterator
(a mixin of `calls.Calls`).

Callbacks: the candidate may ask the judge to run one of the test's own objects (a lambda, an
iterator, a function); the judge runs it on plain data, and the candidate sees only its value,
its exception, or the harmless attributes in `_CALLBACK_ATTRIBUTES`. Draining: a consumer that
exhausts a candidate iterator anyway (``list(h)``) takes its items in chunks.
"""

from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

from .codec import (
    Unserialisable,
    by_position_and_name,
    can_write_back,
    changed_keys,
    encode,
    plain_or_none,
)
from .exceptions import THROWN, describe_exception
from .judge_objects import MAX_JUDGE_OBJECTS
from .replies import Fault

if TYPE_CHECKING:
    from .calls import Calls

DRAIN_ITEMS = 10_000  # items of a candidate iterator per drain reply (also capped in bytes there)

# What a test's callable shows the candidate (functools.wraps copies these): its own words.
_CALLBACK_ATTRIBUTES = frozenset(
    {"__name__", "__qualname__", "__module__", "__doc__", "__dict__", "__annotations__"}
)


def drain(self: Calls, target: dict[str, Any]) -> Any:
    """``__length_hint__`` of a candidate iterator: a consumer that exhausts it anyway
    (``list(h)``) is about to call ``next`` until it ends, doing nothing in between, so the
    candidate may send the items in chunks (one round trip per ``DRAIN_ITEMS``) and how it
    ended; ``next`` then takes them in order. ``for`` loops and ``next()`` never ask: they
    stay one item at a time, as lazy as the candidate's iterator. The number is the items
    buffered (a hint only); NotImplemented for what is not an iterator."""
    ident = target.get("handle")
    if ident in self.drained:
        return len(self.drained[ident][0])
    if type(ident) is not int or not self._drain_more(target):
        return NotImplemented
    return len(self.drained[ident][0])


def next_of(self: Calls, target: dict[str, Any]) -> Any:
    """``next`` of a candidate iterator: from what a drain buffered, else one request."""
    ident = target.get("handle")
    while ident in self.drained:
        items, end = self.drained[ident]
        if items:
            return items.popleft()
        if end is not None:
            del self.drained[ident]  # later ``next`` calls ask the (finished) iterator
            return self._answer(end, iterating=True)
        self._drain_more(target)
    return self.operate("next", target)


def drain_more(self: Calls, target: dict[str, Any]) -> bool:
    reply = self.exchange({"op": "drain", "target": target, "args": [DRAIN_ITEMS]})
    raised = self._raised(reply)  # the request itself failed (or could not be judged)
    if raised is not None:
        raise raised
    items, end = reply.get("items"), reply.get("end")
    if type(items) is not list or not (end is None or type(end) is dict):
        self.fail("protocol_violation", "a malformed drain reply")
    if not items and end is None:
        if reply.get("iterator") is False:
            return False
        self.fail("protocol_violation", "a drain reply with no items and no end")
    decoded = self.in_value(items)
    self.drained[target["handle"]] = (collections.deque(decoded), end)
    return True


def serve(self: Calls, frame: dict[str, Any]) -> dict[str, Any]:
    """Run one of the judge's objects for the candidate; the reply to send back. A call's
    arguments the callback changed in place go back with it (``changed``), also when it raised,
    for the candidate to write into its own objects (a test's ``acc.append`` on the candidate's
    accumulator), as the judge writes back what the candidate changed of the test's."""
    called: list[Any] = []  # the call's arguments and their encoding, once read
    reply = _run(self, frame, called)
    if called and "stop" not in reply:
        return _with_changes(self, reply, *called)
    return reply


def _encoded(self: Calls, objects: dict[int | str, Any]) -> dict[int | str, Any]:
    return {key: encode(value, other=self.mine.reference) for key, value in objects.items()}


def _with_changes(
    self: Calls, reply: dict[str, Any], objects: dict[int | str, Any], before: dict[Any, Any]
) -> dict[str, Any]:
    """``reply`` with the arguments the callback changed; encoded here before and after (the
    same process, so a set's order is the same), never against the candidate's own text."""
    try:
        after = _encoded(self, objects)
        changed = changed_keys(before, after)
    except Unserialisable as exc:  # the callback put something in that cannot cross
        self.last_fault = ("unserialisable", str(exc)[:500])
        return {"raised": describe_exception(TypeError(str(exc)))}
    if any(not can_write_back(objects[key]) for key in changed):
        self.last_fault = (
            "unserialisable",
            "a test's callback changed an argument of the candidate's in a way that cannot be"
            " copied back (a container nested in it)",
        )
        return {"raised": describe_exception(RuntimeError("the callback could not be judged"))}
    if changed:
        reply["changed"] = [[key, after[key]] for key in changed]
    return reply


def _run(self: Calls, frame: dict[str, Any], called: list[Any]) -> dict[str, Any]:
    try:
        target = self.mine.get(frame.get("callback"))
        args = [self.in_value(a) for a in frame.get("args", [])]
        kwargs = {str(k): self.in_value(v) for k, v in frame.get("kwargs", {}).items()}
        op = frame.get("op")
        if op == "call":
            objects = by_position_and_name(args, kwargs)
            called += [objects, _encoded(self, objects)]
            value = target(*args, **kwargs)
        elif op == "iter":
            value = iter(target)
        elif op == "next":
            value = next(target)
        elif op == "getattr" and len(args) == 1 and type(args[0]) is str:
            return {"value": encode(self._attribute(target, args[0]))}  # plain data only
        else:
            self.fail("protocol_violation", "an unknown callback operation")
        return {"value": encode(value, other=self.mine.reference)}
    except StopIteration as stop:
        return {"stop": plain_or_none(stop.args)}
    except Fault:
        if self.fault:
            raise  # the candidate is finished: nothing more to answer
        # The test's own outcome is that fault already (``last_fault``); the candidate only
        # learns that its callback failed.
        return {"raised": describe_exception(RuntimeError("the callback could not be judged"))}
    except Unserialisable as exc:
        self.last_fault = ("unserialisable", str(exc)[:500])
        return {"raised": describe_exception(TypeError(str(exc)))}
    except BaseException as exc:  # what the test's callable raised: the candidate's to see
        described = describe_exception(exc)
        if len(self.thrown) < MAX_JUDGE_OBJECTS:
            described[THROWN] = len(self.thrown)
            self.thrown.append(exc)
        return {"raised": described}


def _own_dict(target: Any) -> dict[str, Any]:
    """A test object's ``__dict__`` (readable whole, so each entry is too: the attributes the
    test or the candidate set on it)."""
    try:
        found = vars(target)
    except TypeError:
        return {}
    return found if type(found) is dict else {}


def attribute(self: Calls, target: Any, name: str) -> Any:
    """An attribute of a test's object the candidate read: an AttributeError if the object
    lacks it, as in-process; the harmless ones as they are; any other (a function's
    ``__code__``, ``__defaults__``, ``__globals__`` hold the test's constants) a fault."""
    value = getattr(target, name)
    if name not in _CALLBACK_ATTRIBUTES and name not in _own_dict(target):
        self.fail(
            "unserialisable",
            f"the candidate read {name[:100]!r} of a test's callable; only "
            + ", ".join(sorted(_CALLBACK_ATTRIBUTES))
            + " cross (as plain data)",
            sticky=False,
        )
    return value
