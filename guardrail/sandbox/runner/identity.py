"""Object identity across the boundary: what a copy cannot show, the candidate refuses to hide.

Values cross as copies, so three things a test can observe in-process would be lost:

* a result that *is* one of the arguments (``xs.sort(); return xs``): it crosses as a reference
  to that argument (``{"arg": key}``) and the judge hands back its own object;
* a result holding one mutable object in two places (``[[0] * 3] * 2``, the classic aliasing
  bug) or holding an argument inside it: the copy would look fine, so the call is unjudgeable;
* a candidate that keeps a reference to a mutable argument after the call (and may change it in
  a later call, where the test's object would not follow): found by comparing the reference
  counts of every mutable object reachable from the arguments before and after the call.

The last two make the call ``unserialisable`` (never ``verified``): fail closed, not a guess.
"""

from __future__ import annotations

import gc
import sys
from typing import Any

from .codec import MUTABLE, Unserialisable

_MOST_TRACKED = 2_000_000  # containers per call; beyond that (frames cap sizes anyway) not judged


_CONTAINERS = (*MUTABLE, tuple, frozenset)


def mutable_parts(values: list[Any]) -> list[Any]:
    """Every mutable container reachable from ``values`` (each once), in a stable order."""
    return _walk(values, dedupe=True)[0]


def _walk(values: list[Any], *, dedupe: bool) -> tuple[list[Any], bool]:
    """(mutable containers reachable from ``values``, whether one was reached twice). Scalars are
    never pushed, so a long list of numbers costs one pass; only containers count to the cap."""
    seen: set[int] = set()
    found: list[Any] = []
    repeated = False
    stack = [value for value in reversed(values) if type(value) in _CONTAINERS]
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in MUTABLE:
            if id(value) in seen:
                repeated = True
                if dedupe:
                    continue
                return found, True
            seen.add(id(value))
            found.append(value)
        if len(seen) + len(stack) > _MOST_TRACKED:
            raise Unserialisable("the values hold too many containers to track")
        items = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
        stack.extend(item for item in reversed(items) if type(item) in _CONTAINERS)
    return found, repeated


def reference_counts(objects: list[Any]) -> list[int]:
    return [sys.getrefcount(obj) for obj in objects]


def check_result(result: Any, tracked: list[Any]) -> None:
    """Refuse a result whose copy would hide sharing: one mutable object twice, or an argument
    (or a part of one) inside it."""
    arguments = {id(obj) for obj in tracked}
    if any(id(part) in arguments for part in mutable_parts([result])):
        raise Unserialisable(
            "the result holds (a part of) an argument; the sharing cannot cross as a copy"
        )
    if _repeats(result):
        raise Unserialisable(
            "the result holds one mutable object in two places; the sharing cannot cross as a copy"
        )


def _repeats(result: Any) -> bool:
    """Whether one mutable object occurs twice in ``result``."""
    return _walk([result], dedupe=False)[1]


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
