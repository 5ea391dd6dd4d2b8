"""The plain-data codec that carries arguments and results across the sandbox boundary."""

from __future__ import annotations

import collections
import decimal
import fractions
import json
import math

import pytest

from guardrail.sandbox.runner import Unserialisable, decode, encode, write_back

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
]


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_round_trip_keeps_value_and_exact_type(value: object) -> None:
    decoded = decode(json.loads(json.dumps(encode(value))))
    assert decoded == value
    assert type(decoded) is type(value)


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
