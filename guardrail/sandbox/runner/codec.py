"""The plain-data codec: exact builtin (and a few stdlib) value types to JSON and back, never
pickle; and the write-back of arguments a call changed in place.

Values that are not plain data cross as references, never as copies: `encode` hands them to its
``other`` hook (which returns a reference form or raises `Unserialisable`) and `decode` hands
reference forms (`REFERENCE_KEYS`) to its ``ref`` hook. Without hooks both refuse them, so a
context that expects plain data (write-back, exception arguments) gets plain data only.
"""

from __future__ import annotations

import base64
import collections
import datetime
import decimal
import fractions
import json
from collections.abc import Callable
from typing import Any


class Unserialisable(Exception):
    """A value of a type that cannot cross the sandbox boundary as plain data."""


_MAX_DEPTH = 200
# Integers above this many bits cross as tagged hex: decimal conversion is quadratic and capped
# at 4,300 digits (an honest 100,000-digit result was an error); hex is linear and uncapped.
_PLAIN_INT_BITS = 8192
_MAPPING_TAGS: dict[type, str] = {
    dict: "d",
    collections.OrderedDict: "od",
    collections.Counter: "ctr",
}


# The keys of the reference forms: a candidate object (``{"handle": id, "type": name}``), a
# candidate global (``{"global": name}``), a judge object (``{"cb": id, "name": name}``), a
# builtin the candidate uses its own of (``{"builtin": "module:qualname"}``) and a part of the
# call's own arguments in its result (``{"argpart": number}``, `identity.argument_parts`).
REFERENCE_KEYS = frozenset({"handle", "global", "cb", "builtin", "argpart"})

# The codec's own value types cross as themselves (``[(1, int)]``, ``type(x) is dict``): a type
# is immutable, and the judge's ``int`` is what the candidate's ``int`` is. Nothing else: a
# builtin function returned by the candidate is its object (a handle), never the judge's.
_VALUE_TYPES: dict[str, type] = {
    kind.__name__: kind
    for kind in (
        *(bool, int, float, complex, str, bytes, bytearray),
        *(list, tuple, dict, set, frozenset, range, slice, type(None)),
        *(datetime.date, datetime.time, datetime.datetime, datetime.timedelta),
        datetime.timezone,
    )
}

Other = Callable[[object], Any]
Ref = Callable[[dict[str, Any]], Any]
Parts = dict[int, tuple[object, Any]]


def encode(
    value: object, depth: int = 0, other: Other | None = None, parts: Parts | None = None
) -> Any:
    """Exact builtin types (and a few stdlib value types) to JSON; anything else goes to
    ``other`` (a reference form), or is refused without one. An object in ``parts`` (by
    identity: ``id -> (object, reference form)``) crosses as its reference form instead: a part
    of a call's arguments returned in its result (``identity.argument_parts``).

    Exact ``type(...) is`` checks on purpose: a ``str`` subclass with a forged ``__eq__`` must
    not pass as a ``str``.
    """
    if depth > _MAX_DEPTH:
        raise Unserialisable("nesting deeper than 200 levels")
    kind = type(value)
    if value is None or kind in (bool, str):
        return value
    if kind is int:
        return _encode_int(value)  # type: ignore[arg-type]  # narrowed by the check
    if parts is not None:
        known = parts.get(id(value))
        if known is not None and known[0] is value:
            return known[1]
    inner = depth + 1
    if type(value) is float:
        return {"f": repr(value)}
    if type(value) is list:
        return [encode(item, inner, other, parts) for item in value]
    if type(value) is tuple:
        return {"t": [encode(item, inner, other, parts) for item in value]}
    if type(value) in _MAPPING_TAGS:
        mapping: dict[Any, Any] = value  # type: ignore[assignment]  # narrowed by the check
        pairs = [
            [encode(k, inner, other, parts), encode(v, inner, other, parts)]
            for k, v in mapping.items()
        ]
        return {_MAPPING_TAGS[kind]: pairs}
    if type(value) is set or type(value) is frozenset:
        return {"s" if kind is set else "fs": [encode(item, inner, other, parts) for item in value]}
    if type(value) is collections.deque:
        items = [encode(item, inner, other, parts) for item in value]
        return {"dq": items} if value.maxlen is None else {"dqm": [value.maxlen, items]}
    if type(value) is bytes or type(value) is bytearray:
        return {"b" if kind is bytes else "ba": base64.b64encode(value).decode("ascii")}
    if type(value) is complex:
        return {"c": [repr(value.real), repr(value.imag)]}
    if type(value) is range:
        return {"r": [_encode_int(value.start), _encode_int(value.stop), _encode_int(value.step)]}
    if type(value) is decimal.Decimal:
        return {"dec": str(value)}
    if type(value) is fractions.Fraction:
        return {"frac": [_encode_int(value.numerator), _encode_int(value.denominator)]}
    if type(value) is slice:
        return {
            "sl": [
                encode(part, inner, other, parts) for part in (value.start, value.stop, value.step)
            ]
        }
    if kind in _DATETIME_TAGS:
        return _encode_datetime(value, other)
    if kind is type:
        name = getattr(value, "__name__", "")
        if _VALUE_TYPES.get(name) is value:
            return {"ty": name}
    if other is not None:
        return other(value)
    raise Unserialisable(f"a value of type {kind.__qualname__} cannot cross as plain data")


# The datetime module's value types, with fixed-offset time zones only (a ``zoneinfo`` or a
# custom tzinfo is code: a value holding one crosses as a reference, through ``other``).
_DATETIME_TAGS: dict[type, str] = {
    datetime.timedelta: "td",
    datetime.date: "date",
    datetime.time: "time",
    datetime.datetime: "dt",
    datetime.timezone: "tz",
}


def _encode_datetime(value: Any, other: Other | None) -> Any:
    kind = type(value)
    if kind is datetime.timedelta:
        return {"td": [value.days, value.seconds, value.microseconds]}
    if kind is datetime.timezone:
        offset, *name = value.__getinitargs__()
        return {"tz": [_encode_datetime(offset, None), *name]}
    if kind is datetime.date:
        return {"date": [value.year, value.month, value.day]}
    zone = value.tzinfo
    if zone is not None and type(zone) is not datetime.timezone:
        if other is None:
            raise Unserialisable("a datetime whose time zone is not a fixed offset")
        return other(value)
    clock = [value.hour, value.minute, value.second, value.microsecond, value.fold]
    zoned = None if zone is None else _encode_datetime(zone, None)
    if kind is datetime.time:
        return {"time": [*clock, zoned]}
    return {"dt": [value.year, value.month, value.day, *clock, zoned]}


def _decode_datetime(tag: str, payload: Any) -> Any:
    if type(payload) is not list or any(
        type(p) not in (int, str, dict, type(None)) for p in payload
    ):
        raise ValueError(f"malformed {tag}")
    if tag == "td":
        return datetime.timedelta(*payload)
    if tag == "tz":
        offset = _decode_datetime("td", payload[0]["td"]) if type(payload[0]) is dict else None
        return datetime.timezone(offset, *payload[1:])  # type: ignore[arg-type]
    if tag == "date":
        return datetime.date(*payload)
    *fields, fold, zone = payload
    tzinfo = None if zone is None else _decode_datetime("tz", zone["tz"])
    kind: Any = datetime.time if tag == "time" else datetime.datetime
    return kind(*fields, tzinfo=tzinfo, fold=fold)


def message_of(exc: BaseException, limit: int) -> str:
    """``str(exc)`` capped; never raises (a message holding a 5,000-digit int cannot be printed
    in decimal, and a candidate's ``__str__`` may raise anything)."""
    try:
        return str(exc)[:limit]
    except BaseException:  # also the judge's own fault: a message that shows a remote object
        return f"<the {type(exc).__name__} message cannot be printed>"[:limit]


def plain_or_none(args: tuple[Any, ...]) -> Any:
    """The arguments of a StopIteration (a generator's return value) as plain data, or None."""
    try:
        return encode(args)
    except Unserialisable:
        return None


def stop_arguments(data: Any) -> tuple[Any, ...]:
    """The arguments of a StopIteration (a generator's return value) sent as plain data."""
    try:
        args = decode(data)
    except (ValueError, TypeError, KeyError, RecursionError):
        return ()
    return args if type(args) is tuple else ()


def _encode_int(value: int) -> Any:
    return value if value.bit_length() <= _PLAIN_INT_BITS else {"i": format(value, "x")}


def decode(data: Any, ref: Ref | None = None) -> Any:
    """Inverse of `encode`; builds only builtin and stdlib value types, and hands reference
    forms to ``ref`` (refused without one)."""
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is list:
        return [decode(item, ref) for item in data]
    if type(data) is not dict:
        raise ValueError("malformed value")
    if ref is not None and not REFERENCE_KEYS.isdisjoint(data):
        return ref(data)
    if len(data) != 1:
        raise ValueError("malformed value")
    ((tag, payload),) = data.items()
    if tag == "i":
        if type(payload) is not str:
            raise ValueError("malformed integer")
        return int(payload, 16)  # linear for a power-of-two base, and not capped
    if tag == "f":
        return float(payload)
    if tag == "t":
        return tuple(decode(item, ref) for item in payload)
    if tag in ("d", "od", "ctr"):
        factory = {"d": dict, "od": collections.OrderedDict, "ctr": collections.Counter}[tag]
        # Built from a dict: Counter(pairs) would count the pairs instead of taking them.
        return factory({decode(k, ref): decode(v, ref) for k, v in payload})
    if tag in ("s", "fs"):
        return (set if tag == "s" else frozenset)(decode(item, ref) for item in payload)
    if tag == "dq":
        return collections.deque(decode(item, ref) for item in payload)
    if tag == "dqm":  # a bounded deque keeps its bound, or appends would drop the wrong end
        maxlen, items = payload
        if type(maxlen) is not int or maxlen < 0:
            raise ValueError("malformed bounded deque")
        return collections.deque((decode(item, ref) for item in items), maxlen)
    if tag in ("b", "ba"):
        raw = base64.b64decode(payload)
        return raw if tag == "b" else bytearray(raw)
    if tag == "c":
        return complex(float(payload[0]), float(payload[1]))
    if tag == "r":
        return range(*[_decode_int(item) for item in payload])
    if tag == "dec":
        return decimal.Decimal(payload)
    if tag == "frac":
        return fractions.Fraction(*[_decode_int(item) for item in payload])
    if tag == "sl":
        return slice(*[decode(item, ref) for item in payload])
    if tag in _DATETIME_DECODED:
        try:
            return _decode_datetime(tag, payload)
        except (TypeError, ValueError, OverflowError, IndexError, KeyError) as exc:
            raise ValueError(f"malformed {tag}: {exc}") from exc
    if tag == "ty":
        kind = _VALUE_TYPES.get(payload) if type(payload) is str else None
        if kind is None:
            raise ValueError("malformed type")
        return kind
    raise ValueError(f"unknown value tag {tag!r}")


_DATETIME_DECODED = frozenset(_DATETIME_TAGS.values())


def _decode_int(data: Any) -> int:
    value = decode(data)
    if type(value) is not int:
        raise ValueError("malformed integer")
    return value


def by_position_and_name(args: list[Any], kwargs: dict[str, Any]) -> dict[int | str, Any]:
    """Arguments keyed by position and keyword name, so before and after can be compared."""
    keyed: dict[int | str, Any] = dict(enumerate(args))
    keyed.update(kwargs)
    return keyed


def changed_keys(before: dict[Any, Any], after: dict[Any, Any]) -> list[Any]:
    """The keys of the encoded arguments a call changed in place. Compared as canonical JSON
    text: ``True == 1`` in Python, but an int turned into a bool in place is a change a test may
    check (``type(v) is int``). References (handles, the test's callables) are never changed in
    place: they are what they were. Raises KeyError for a key ``after`` lacks."""
    return [
        key
        for key in before
        if not (type(before[key]) is dict and not REFERENCE_KEYS.isdisjoint(before[key]))
        and canonical_text(after[key]) != canonical_text(before[key])
    ]


def canonical_text(encoded: Any) -> str:
    """An encoded value as JSON text, equal only for values equal in type as well as value."""
    return json.dumps(encoded, separators=(",", ":"))


def can_write_back(value: Any) -> bool:
    """Whether a changed argument can be copied back exactly: a mutable container whose items are
    all immutable. Inner containers would come back as new objects, silently breaking aliasing."""
    if type(value) not in MUTABLE:
        return False
    if type(value) is bytearray:
        return True
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
    return all(_immutable(item) for item in items)


def _immutable(value: Any) -> bool:
    """True for tuples and frozensets made only of immutable builtin values."""
    if type(value) in (tuple, frozenset):
        return all(_immutable(item) for item in value)
    return type(value) not in MUTABLE


def write_back(original: Any, updated: Any) -> None:
    """Copy an argument's post-call state into the judge's own object (in-place mutation)."""
    kind = type(original)
    if kind is list or kind is bytearray:
        original[:] = updated
    elif kind in (dict, collections.OrderedDict, collections.Counter, set):
        original.clear()
        original.update(updated)
    elif kind is collections.deque:
        original.clear()
        original.extend(updated)


MUTABLE = (
    list,
    dict,
    set,
    bytearray,
    collections.deque,
    collections.OrderedDict,
    collections.Counter,
)
