"""What a candidate returns on an input, observed by the judge: ``__observe__(thunk, *args)``.

A probe test (`guardrail.probes`) hands the judge's `Observer` a thunk that calls the candidate
and the probe's arguments (``__observe__(lambda *a, **k: f(*a, **k), [3, 1], k=2)``).
The observer calls it and records, in the judge only, what came back:

* ``value``: the result is plain data (the codec's exact builtin types, no handle anywhere in
  it); its text is the judge's own ``repr`` of the decoded value (capped), and its key the
  sha256 of `key_text`, a canonical form under which values that compare equal (``1``, ``1.0``
  and ``True``; a set in any order; a dict in any order) give one key; when the probe passed
  mutable arguments (a list, a dict...), ``after`` holds their reprs once the call returned
  (what the candidate changed in place, written back by the judge), and the key covers them;
* ``raises``: the candidate raised; the text is the exception's type name as identifier
  characters (the only part of it the candidate chose that is kept);
* nothing: the result is a candidate object (a handle: a generator, an instance) or a judge
  fault hit the call (timeout, the candidate gone, a value that could not cross). The judge's
  non-sticky ``unserialisable`` fault marks the test, so the outcome is unjudged, never compared.

The record goes into the test's outcome as ``observed`` (`judge.Judge._run_test`), a field only
judge code sets: the candidate's process never reaches the judge's memory, its exception names
are reduced to words and its values are rendered by the judge's builtins (exact types only, so no
candidate ``__repr__`` or ``__eq__`` runs). The host recomputes `key_text` of a text it reads back
with ``ast.literal_eval`` to tell a faithful literal from a capped or unrepresentable one.
"""

from __future__ import annotations

import collections
import decimal
import fractions
import hashlib
import math
from collections.abc import Callable
from typing import Any, NoReturn

from .codec import MUTABLE, Unserialisable, encode
from .exceptions import CandidateRaisedBase, safe_name

__all__ = ["OBSERVER", "TEXT_LIMIT", "Observer", "key_of", "key_text", "shown"]

OBSERVER = "__observe__"  # the judge's name for it in the tests' namespace
TEXT_LIMIT = 1000  # characters of a value's repr an observation carries
_UNSHOWN = "<a value whose repr the judge cannot show>"


class Observer:
    """``__observe__`` for one job: records what the thunk of the current test gave."""

    def __init__(self, fail: Callable[..., NoReturn]) -> None:
        self.fail = fail  # the judge's `Calls.fail`: raises its fault
        self.seen: dict[str, Any] | None = None

    def __call__(self, thunk: Callable[..., Any], /, *args: Any, **kwargs: Any) -> None:
        """Call ``thunk(*args, **kwargs)`` (the arguments are the judge's own objects, so what
        the candidate changed in place is written back into them) and record what it gave,
        with the state afterwards of each mutable argument (`MUTABLE`), in order."""
        try:
            value = thunk(*args, **kwargs)
        except (Exception, CandidateRaisedBase) as exc:  # never the judge's faults
            name = safe_name(type(exc).__name__)
            self.seen = {"kind": "raises", "text": name, "key": f"raises:{name}"}
            return
        after = [arg for arg in (*args, *kwargs.values()) if type(arg) in MUTABLE]
        try:
            encode(value)  # no hook: a handle or a judge object anywhere in it is refused
            key = key_of((value, tuple(after)) if after else value)
        except (Unserialisable, RecursionError) as exc:
            self.fail("unserialisable", f"the result cannot be observed: {exc}", sticky=False)
        self.seen = {"kind": "value", "text": shown(value), "key": key}
        if after:
            self.seen["after"] = [shown(arg) for arg in after]

    def take(self) -> dict[str, Any] | None:
        """The current test's observation (None if it made none), and forget it."""
        seen, self.seen = self.seen, None
        return seen


def key_of(value: Any) -> str:
    """The equality key of a plain value: sha256 of `key_text`."""
    return hashlib.sha256(key_text(value).encode("utf-8", "surrogatepass")).hexdigest()


def key_text(value: Any, depth: int = 0) -> str:
    """A canonical text of a plain value: values that compare equal give one text.

    Numbers by exact value (``1 == 1.0 == True == Fraction(1)``), sets, frozensets and mappings
    sorted (their equality ignores order; an `OrderedDict`'s order is ignored too, which can only
    merge two answers, never split equal ones), ``bytes`` like ``bytearray``, ranges by the
    sequence they give. Raises `Unserialisable` for anything else (the codec's check comes first).
    """
    if depth > 200:
        raise Unserialisable("nesting deeper than 200 levels")
    kind = type(value)
    inner = depth + 1
    if value is None:
        return "None"
    if kind in (bool, int, float, fractions.Fraction, decimal.Decimal, complex):
        return _number(value)
    if kind is str:
        return "s" + repr(value)
    if kind in (bytes, bytearray):
        return "b" + repr(bytes(value))
    if kind is list:
        return "[" + ",".join(key_text(item, inner) for item in value) + "]"
    if kind is tuple:
        return "(" + ",".join(key_text(item, inner) for item in value) + ")"
    if kind is collections.deque:
        return "dq[" + ",".join(key_text(item, inner) for item in value) + "]"
    if kind in (set, frozenset):
        return "{" + ",".join(sorted(key_text(item, inner) for item in value)) + "}"
    if kind in (dict, collections.OrderedDict, collections.Counter):
        pairs = (key_text(k, inner) + ":" + key_text(v, inner) for k, v in value.items())
        return "{:" + ",".join(sorted(pairs)) + "}"
    if kind is range:
        triple = (len(value), value.start if value else 0, value.step if len(value) > 1 else 0)
        return "r" + repr(triple)
    if kind is slice:
        parts = (value.start, value.stop, value.step)
        return "sl(" + ",".join(key_text(part, inner) for part in parts) + ")"
    if kind is type:
        return "ty" + str(value.__name__)
    raise Unserialisable(f"a value of type {kind.__qualname__} cannot be observed")


def _number(value: Any) -> str:
    """An exact number by its value: an integer in hex (linear), else a reduced fraction."""
    if type(value) is complex:
        if value.imag != 0:
            return "c(" + _number(value.real) + "," + _number(value.imag) + ")"
        value = value.real
    if type(value) is decimal.Decimal and not value.is_finite():
        # Decimal('inf') == float('inf'); a NaN equals nothing, so its key merges nothing real
        return "fnan" if value.is_nan() else "f" + repr(float(value))
    if type(value) is float and not math.isfinite(value):
        return "f" + repr(value)
    exact = fractions.Fraction(value)
    if exact.denominator == 1:
        return f"n{exact.numerator:x}"
    return f"q{exact.numerator:x}/{exact.denominator:x}"


def shown(value: Any) -> str:
    """The judge's repr of a plain value, capped; a placeholder when it has none (an integer
    past the interpreter's digit limit)."""
    try:
        text = repr(value)
    except (ValueError, RecursionError, MemoryError):
        return _UNSHOWN
    if len(text) > TEXT_LIMIT:
        return text[: TEXT_LIMIT - 20] + "... [cut]"  # never parses: the host sees it is cut
    return text
