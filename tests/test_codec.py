"""The plain-data codec that carries arguments and results across the sandbox boundary."""

from __future__ import annotations

import collections
import datetime
import decimal
import fractions
import json
import math

import pytest

from guardrail.gate import Gate
from guardrail.sandbox.runner.codec import Unserialisable, decode, encode, message_of, write_back
from guardrail.spec import Spec
from guardrail.verdict import Status

VALUES = [
    None,
    True,
    False,
    0,
    -7,
    10**40,
    1.5,
    -0.0,
    math.inf,
    "text",
    "",
    [1, [2, (3, 4)]],
    (),
    (1,),
    {"a": 1, 2: [3]},
    {(1, 2): frozenset({3})},
    {1, 2},
    b"\x00\xff",
    bytearray(b"ab"),
    3 + 4j,
    range(1, 10, 2),
    collections.OrderedDict([("b", 1), ("a", 2)]),
    collections.Counter("hello"),
    collections.deque([1, 2]),
    decimal.Decimal("1.10"),
    fractions.Fraction(3, 4),
    slice(1, None, -1),
    [(1, int), ("a", str), type(None), dict],
    datetime.date(2024, 2, 29),
    datetime.timedelta(days=-1, seconds=5, microseconds=3),
    datetime.datetime(2024, 1, 2, 3, 4, 5, 6),
    datetime.datetime(2024, 1, 2, fold=1, tzinfo=datetime.timezone(datetime.timedelta(hours=5))),
    datetime.time(1, 2, 3, 4, tzinfo=datetime.UTC),
    datetime.timezone(datetime.timedelta(hours=-3), "BRT"),
    [datetime.date, datetime.timedelta],
]


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_round_trip_keeps_value_and_exact_type(value: object) -> None:
    decoded = decode(json.loads(json.dumps(encode(value))))
    assert decoded == value
    assert type(decoded) is type(value)
    assert repr(decoded) == repr(value)  # a doctest shows it: fold and a zone's name too


class Zone(datetime.tzinfo):
    def utcoffset(self, _when: object) -> datetime.timedelta:
        return datetime.timedelta(hours=1)

    def dst(self, _when: object) -> datetime.timedelta:
        return datetime.timedelta(0)

    def tzname(self, _when: object) -> str:
        return "Z1"


def test_a_datetime_whose_zone_is_code_crosses_only_as_a_reference() -> None:
    when = datetime.datetime(2024, 1, 1, tzinfo=Zone())
    with pytest.raises(Unserialisable, match="fixed offset"):
        encode(when)
    assert encode([when], other=lambda value: {"handle": 1, "type": "datetime"}) == [
        {"handle": 1, "type": "datetime"}
    ]


@pytest.mark.parametrize(
    "bad", [{"td": [10**12, 0, 0]}, {"date": [2024, 13, 1]}, {"dt": [1]}, {"tz": ["x"]}]
)
def test_malformed_datetimes_are_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match="malformed"):
        decode(bad)


def test_references_cross_only_through_the_hooks() -> None:
    """Without hooks a value that is not plain data, and a reference form, are refused; with
    them each goes to its hook (handles, callbacks), also deep inside containers."""
    marker = object()
    with pytest.raises(Unserialisable):
        encode([marker])
    encoded = encode({"k": (marker,)}, other=lambda value: {"handle": 7, "type": "object"})
    assert encoded == {"d": [["k", {"t": [{"handle": 7, "type": "object"}]}]]}
    with pytest.raises(ValueError, match="malformed"):
        decode(encoded)
    assert decode(encoded, lambda ref: ("ref", ref["handle"])) == {"k": (("ref", 7),)}


def test_bool_and_int_and_float_stay_distinct() -> None:
    assert [type(decode(encode(v))) for v in (True, 1, 1.0)] == [bool, int, float]


def test_nan_round_trips() -> None:
    assert math.isnan(decode(json.loads(json.dumps(encode(math.nan)))))


class ForgedStr(str):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = str.__hash__


@pytest.mark.parametrize(
    "value", [ForgedStr("x"), object(), lambda: 1, iter([1]), [ForgedStr("x")]]
)
def test_subclasses_and_objects_are_refused(value: object) -> None:
    with pytest.raises(Unserialisable):
        encode(value)


def test_depth_limit() -> None:
    deep: list[object] = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(Unserialisable, match="nesting"):
        encode(deep)


@pytest.mark.parametrize("bad", [{"zz": 1}, {"a": 1, "b": 2}, 1.5])
def test_malformed_values_are_rejected(bad: object) -> None:
    with pytest.raises(ValueError, match=r"malformed value|unknown value tag"):
        decode(bad)


def test_write_back_mutates_in_place() -> None:
    items, table, seen = [3, 1], {"a": 1}, {1}
    for original, updated in ((items, [1, 3]), (table, {"b": 2}), (seen, {2, 3})):
        before = id(original)
        write_back(original, updated)
        assert id(original) == before
    assert (items, table, seen) == ([1, 3], {"b": 2}, {2, 3})


@pytest.mark.parametrize(
    "value",
    [
        10**100000,
        -(10**5000),
        2**8192,
        2**8193,
        fractions.Fraction(10**5000 + 1, 3),
        range(0, 10**5000, 10**4999),
        [10**5000, (10**5000,)],
    ],
    ids=["1e100000", "-1e5000", "2^8192", "2^8193", "fraction", "range", "nested"],
)
def test_big_integers_cross_both_ways_past_the_decimal_limit(value: object) -> None:
    """Over 4,300 digits, decimal int/str conversion raises; the codec uses tagged hex."""
    decoded = decode(json.loads(json.dumps(encode(value))))
    assert decoded == value
    assert type(decoded) is type(value)


def test_a_malformed_big_integer_is_refused() -> None:
    for payload in ({"i": 12}, {"i": "xyz"}, {"r": ["a", 1, 1]}):
        with pytest.raises(ValueError, match=r"malformed|invalid literal"):
            decode(payload)


def test_exception_messages_that_cannot_be_printed_are_described() -> None:
    assert message_of(ValueError(10**5000), 100) == ("<the ValueError message cannot be printed>")
    assert message_of(ValueError("x" * 1000), 10) == "x" * 10


@pytest.mark.docker
def test_a_100000_digit_result_and_a_5000_digit_argument_verify(gate: Gate) -> None:
    spec = Spec.from_tests(
        ["assert grow(10**5000) == 10**100000", "assert grow(-(10**5000)) == 10**100000"]
    )
    (verdict,) = gate.verify(["def grow(n):\n    return n ** 20\n"], spec)
    assert verdict.status is Status.VERIFIED, verdict
