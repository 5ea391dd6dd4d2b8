"""What a call gave, settled in the judge before it is compared: shared by the gate's probes
(`guardrail.probes`) and the audit (`guardrail.audit.calling`).

A probe test calls the candidate through a thunk (`settled_call`) that hands the result to the
judge's settle helper (`SETTLE_SETUP`, run as the observing spec's setup) before the judge's
observer records it:

* a coroutine (an ``async def`` function's result) is run to completion by ``asyncio.run`` in
  the candidate's own process, so whatever it awaits runs on a real event loop; the job's
  timeout bounds it, and a coroutine that never finishes is a timeout (unjudged), never a value.
  What it gives is settled in turn and tagged `AWAITED` (a test of it must await it too);
* an iterator (a generator, ``map``, ``itertools.islice``..., anything that is its own
  iterator) is drained: at most `DRAIN_LIMIT` items, one ``next`` each, then one more to learn
  whether it was exhausted. What is compared is ``(DRAINED, ending, items)``, where the ending
  is ``exhausted``, ``more`` (an infinite or long iterator: equal prefixes are equal, never a
  divergence) or ``raises X`` (the exception raised while draining). An exception before the
  first item is the call's own (``raises X``, as for a copy that checks its arguments eagerly),
  unless the iterator is an item of a tuple or list (the call itself returned);
* a tuple or list of at most `SETTLED_ITEMS` items has each item settled (``(gen, 3)``, a list
  of generators), down to a fixed depth;
* an async generator cannot be drained here: the helper raises `NOT_COMPARED_ERROR`, a
  ``BaseException`` the observer does not catch, so the test is unjudged, never a value;
* anything else is left as it is: plain data is observed, a candidate object that is not its own
  iterator cannot be observed (unjudged, with the judge's reason).

Every step runs in the judge, on handles the judge drives, in code written here (trusted text,
never taken from a candidate); the candidate never sees what the other side gave. The settled
value crosses the observer as plain tagged tuples, which `read` (and the audit's `describe`)
turn back into words, so no tag reaches a person. A candidate could return such a tuple itself;
it is then shown as what it imitates, and a test written from it (``list(f(x)) == [...]``)
still fails for it, as the test asks for an iterator.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Any, Literal

from guardrail.verdict import Observation

__all__ = [
    "AWAITED",
    "DRAINED",
    "DRAIN_LIMIT",
    "NOT_COMPARED_ERROR",
    "SETTLE",
    "SETTLED_ITEMS",
    "SETTLE_SETUP",
    "Reading",
    "describe",
    "plain",
    "read",
    "settled_call",
    "unwrapped",
]

DRAIN_LIMIT = 1000  # items of an iterator result compared
SETTLED_ITEMS = 100  # items of a tuple or list result settled one by one
DRAINED = "<guardrail: drained iterator>"  # the tag of a settled iterator's tuple
AWAITED = "<guardrail: awaited coroutine>"  # the tag of a run coroutine's result
SETTLE = "__guardrail_settle__"
NOT_COMPARED_ERROR = "GuardrailNotCompared"
_DEPTH = 2  # nesting levels settled: a coroutine's tuple's items, a tuple's items

# Judge-side code (trusted: written here). ``type(x).__name__`` of a candidate object is its
# class's name as the candidate process reports it; ``iter(h) is h`` holds for a handle exactly
# when the candidate's object is its own iterator.
SETTLE_SETUP = f'''
class {NOT_COMPARED_ERROR}(BaseException):
    """Not an answer of the candidate: it could not be called or settled (the message says why)."""


def {SETTLE}(value, depth=0, whole=True):
    plain = (type(None), bool, int, float, complex, str, bytes, bytearray, dict, set, frozenset,
             range, slice)
    kind = type(value)
    if kind in plain or depth > {_DEPTH}:
        return value
    if kind in (tuple, list):
        if len(value) > {SETTLED_ITEMS}:
            return value
        return kind([{SETTLE}(item, depth + 1, False) for item in value])
    name = kind.__name__
    if name == "async_generator":
        raise {NOT_COMPARED_ERROR}("it returns an async generator")
    if name == "coroutine":
        loop = value.cr_frame.f_builtins["__import__"]("asyncio")
        return ({AWAITED!r}, {SETTLE}(loop.run(value), depth + 1, whole))
    try:
        own = iter(value) is value
    except Exception:
        return value
    if not own:
        return value
    items = []
    ending = "exhausted"
    try:
        for item in value:
            if len(items) == {DRAIN_LIMIT}:
                ending = "more"
                break
            items.append(item)
    except Exception as exc:
        if not items and whole:  # before its first item: what an eager copy raising at once does
            raise
        name = "".join(c for c in type(exc).__name__ if c.isalnum() or c == "_")[:100]
        ending = "raises " + name
    return ({DRAINED!r}, ending, items)
'''


def settled_call(expression: str) -> str:
    """The thunk a probe test hands the observer: it calls ``expression`` (trusted text: an
    entry point's name, or the audit's callee) and settles what it gives."""
    return f"lambda *a, **k: {SETTLE}({expression}(*a, **k))"


Ending = str  # "exhausted", "more" or "raises <Name>"


def unwrapped(value: Any) -> tuple[bool, Ending | None, Any]:
    """``(awaited, ending, payload)`` of a settled value read back: whether a coroutine gave
    it, the ending of a drained iterator (None for any other value), and the value itself (a
    drained iterator's items)."""
    awaited = _awaited(value)
    if awaited:
        value = value[1]
    if _drained(value):
        return awaited, value[1], value[2]
    return awaited, None, value


def plain(value: Any) -> bool:
    """Whether a value read back holds no settled tag anywhere (it is what the call gave)."""
    if _awaited(value) or _drained(value):
        return False
    if type(value) in (list, tuple):
        return all(plain(item) for item in value)
    return True


@dataclass(frozen=True)
class Reading:
    """A settled observation's text in words: ``text`` is the value (a drained iterator's
    items), with every settled item inside it written out (``<iterator yielding [1, 2]>``)."""

    text: str
    ending: Ending | None = None  # a drained iterator's ending; None for any other value
    awaited: bool = False  # a coroutine's result

    @property
    def words(self) -> str:
        """``returns [1, 2]``, ``yields [1, 2] and more``, ``yields [] then raises X``...,
        with ``once awaited`` for a coroutine's."""
        if self.ending is None:
            shown = f"returns {self.text}"
        else:
            shown = f"yields {self.text}{_tail(self.ending, 'then raises')}"
        return f"{shown} once awaited" if self.awaited else shown


def read(text: str) -> Reading:
    """The words of a value observation's text (the judge's repr of a settled value, possibly
    cut short: then what the tags at its start say, and the rest as it is)."""
    if DRAINED not in text and AWAITED not in text:
        return Reading(text)
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return _read_cut(text)
    awaited, ending, payload = unwrapped(value)
    return Reading(_words(payload), ending, awaited)


def describe(observation: Observation) -> tuple[Literal["value", "raises", "yields"], str]:
    """``(kind, text)`` of a judged observation for the audit's report: ``yields`` for a drained
    iterator (its items, then how it ended in brackets), else the observation's own kind and
    text; ``(awaited)`` after a coroutine's."""
    if observation.kind == "raises":
        return "raises", observation.text
    reading = read(observation.text)
    mark = " (awaited)" if reading.awaited else ""
    if reading.ending is None:
        return "value", reading.text + mark
    ending = {"exhausted": "exhausted", "more": f"more after {DRAIN_LIMIT}"}.get(
        reading.ending, reading.ending
    )
    return "yields", f"{reading.text} ({ending}){mark}"


def _awaited(value: Any) -> bool:
    return type(value) is tuple and len(value) == 2 and value[0] == AWAITED


def _drained(value: Any) -> bool:
    return (
        type(value) is tuple
        and len(value) == 3
        and value[0] == DRAINED
        and type(value[1]) is str
        and type(value[2]) is list
    )


def _tail(ending: Ending, raising: str) -> str:
    if ending == "more":
        return " and more"
    if ending.startswith("raises "):
        return f" {raising} {ending.removeprefix('raises ')}"
    return ""


def _words(value: Any) -> str:
    """``repr(value)`` with each settled item written out in words."""
    if _awaited(value):
        return f"<coroutine giving {_words(value[1])}>"
    if _drained(value):
        return f"<iterator yielding {_words(value[2])}{_tail(value[1], 'then raising')}>"
    if type(value) is list:
        return "[" + ", ".join(_words(item) for item in value) + "]"
    if type(value) is tuple:
        inner = ", ".join(_words(item) for item in value)
        return f"({inner},)" if len(value) == 1 else f"({inner})"
    return repr(value)


_AWAITED_START = "(" + repr(AWAITED) + ", "
_DRAINED_START = re.compile(r"\(" + re.escape(repr(DRAINED)) + r", '(exhausted|more|raises \w+)', ")
_AWAITED_TAG = re.compile(r"\(" + re.escape(repr(AWAITED)) + ", ")


def _read_cut(text: str) -> Reading:
    """`read` of a text the judge cut short (it does not parse): the tags its start carries,
    and the rest with every inner tag replaced by a word."""
    awaited = text.startswith(_AWAITED_START)
    if awaited:
        text = text.removeprefix(_AWAITED_START)
    found = _DRAINED_START.match(text)
    ending = found.group(1) if found else None
    rest = text[found.end() :] if found else text
    rest = _DRAINED_START.sub(lambda m: f"<iterator ({m.group(1)}) yielding ", rest)
    rest = _AWAITED_TAG.sub("<coroutine giving ", rest)
    torn = rest.find("('<guardrail")  # a tag the cut went through
    return Reading(rest if torn < 0 else rest[:torn] + "... [cut]", ending, awaited)
