"""Object identity across the boundary: what a copy cannot show, the candidate refuses to hide.

Values cross as copies, so three things a test can observe in-process would be lost:

* a result that *is* one of the arguments, of any type (``xs.sort(); return xs``, ``f(s) is
  s``): it crosses as a reference to that argument (``{"arg": key}``) and the judge hands back
  its own object;
* a result holding one mutable object of the candidate's own in two places (``[[0] * 3] * 2``,
  the classic aliasing bug): the copy would look fine, so the call is unjudgeable;
* a candidate that keeps a reference to a mutable argument after the call (and may change it in
  a later call, where the test's object would not follow): found by comparing the reference
  counts of every mutable object reachable from the arguments before and after the call.

The last two make the call ``unserialisable`` (never ``verified``): fail closed, not a guess.
The kept-reference check is skipped where keeping is the point: a call through a handle (a
method: the object keeps what it is given) and a call whose result crossed as a new handle (a
generator keeps its argument). Residual risk there: the candidate's copy and the test's object
diverge unseen if either changes later (a generator that changes its input while iterated).
Parts of the arguments inside a result (``index_by(records)`` returns the records,
``clone(x)["c"] is x["c"]``, ``f(t) is t`` for a tuple) cross as references to them
(``{"argpart": n}``): both sides number the containers reachable from the call's arguments in
the same walk (`argument_parts`: the judge over its own objects, the candidate over the copies it
decoded, which have the same shape), and the judge hands back its own object number ``n``. A
number names only a part of that call's own arguments, so the candidate can name nothing of the
judge's that the call did not give it. Sets are not entered (their order is each process's own).
"""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from typing import Any

from .codec import MUTABLE, Unserialisable

_MOST_TRACKED = 2_000_000  # containers per call; beyond that (frames cap sizes anyway) not judged


_CONTAINERS = (*MUTABLE, tuple, frozenset)
_MOST_PARTS = 1_000_000  # argument parts numbered per call; past it, none are (copies, as before)


def argument_parts(arguments: list[Any]) -> list[Any]:
    """The containers reachable from ``arguments``, numbered by a depth-first walk in order
    (a mapping's keys and values pair by pair; sets and frozensets not entered). An object
    reached twice gets two numbers: its copies in the candidate are two objects. Empty past
    `_MOST_PARTS` (on both sides alike: the same shapes give the same count)."""
    parts: list[Any] = []
    stack = [value for value in reversed(arguments) if type(value) in _CONTAINERS]
    while stack:
        value = stack.pop()
        parts.append(value)
        if len(parts) + len(stack) > _MOST_PARTS:
            return []
        if isinstance(value, set | frozenset | bytearray):
            continue
        items = (
            [item for pair in value.items() for item in pair]
            if isinstance(value, dict)
            else list(value)
        )
        stack.extend(item for item in reversed(items) if type(item) in _CONTAINERS)
    return parts


def mutable_parts(values: list[Any]) -> list[Any]:
    """Every mutable container reachable from ``values`` (each once), in a stable order."""
    return [part for part, again in _walk(values, skip=set()) if not again]


def _walk(values: list[Any], *, skip: set[int]) -> Iterator[tuple[Any, bool]]:
    """Each mutable container reachable from ``values`` as it is reached, with whether it was
    reached before (never entered twice, so cycles end), not entering those in ``skip``.
    Scalars are never pushed, so a long list of numbers costs one pass; only containers count
    to the cap."""
    seen: set[int] = set()
    stack = [value for value in reversed(values) if type(value) in _CONTAINERS]
    while stack:
        value = stack.pop()
        if id(value) in skip:
            continue
        if type(value) in MUTABLE:
            again = id(value) in seen
            yield value, again
            if again:
                continue
            seen.add(id(value))
        if len(seen) + len(stack) > _MOST_TRACKED:
            raise Unserialisable("the values hold too many containers to track")
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
        stack.extend(item for item in reversed(items) if type(item) in _CONTAINERS)


def reference_counts(objects: list[Any]) -> list[int]:
    return [sys.getrefcount(obj) for obj in objects]


def check_result(result: Any, tracked: list[Any]) -> None:
    """Refuse a result whose copy would hide sharing the candidate made: one mutable object of
    its own in two places. Parts of the arguments are skipped (see the module docstring)."""
    if any(again for _part, again in _walk([result], skip={id(obj) for obj in tracked})):
        raise Unserialisable(
            "the result holds one mutable object in two places; the sharing cannot cross as a copy"
        )


def check_not_kept(tracked: list[Any], before: list[int]) -> None:
    """Refuse the call if the candidate still holds a reference to a mutable argument (or part)."""
    if reference_counts(tracked) == before:
        return
    gc.collect()  # a traceback or another cycle may hold the last frame's locals
    if reference_counts(tracked) != before:
        raise Unserialisable(
            "the candidate kept a reference to an argument; later changes through it could not"
            " reach the test's own object"
        )
