"""Values to probe a function with: type-aware mutations of a literal, and examples of a type
hint. Pure functions of their input (and a seeded `random.Random`), used by `guardrail.probes`.

Every value is plain literal data (what ``ast.literal_eval`` builds), so it crosses the sandbox
as data and its ``repr`` is its source text. Mutations are single edits, the kind a near-clone's
bug reacts to: a boundary (``0``, ``-1``, ``±1``, empty), one element dropped, added or
duplicated, the order reversed, one character changed, a flag flipped, a dict entry dropped
or added.
"""

from __future__ import annotations

import ast
import contextlib
import math
import random
from collections.abc import Iterator
from typing import Any

from guardrail.probe_functions import PureFunction

__all__ = ["hint_values", "literal_text", "mutations"]

MAX_TEXT = 2000  # characters of one argument's source text; a bigger value is not probed
_LARGE = 1000  # a "large" number: 10**6 as a size or a bit count made probe jobs time out


def literal_text(value: Any) -> str | None:
    """``repr(value)`` when it is a literal that reads back equal (of the same type), a pure
    function's text (`guardrail.probe_functions`), else None (a NaN, an infinity, a
    ``frozenset``, a value too long to paste)."""
    if isinstance(value, PureFunction):
        return value.text
    try:
        text = repr(value)
    except (ValueError, RecursionError):  # an integer past the digit limit
        return None
    if len(text) > MAX_TEXT:
        return None
    try:
        back = ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text if _same(back, value) else None


def _same(a: Any, b: Any) -> bool:
    """Equal and of the same types throughout (``1 == 1.0`` is not the same literal)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, list | tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, float) and math.isnan(a):
        return False
    return bool(a == b)


def mutations(value: Any, rng: random.Random) -> Iterator[Any]:
    """Single-edit variants of a literal value, most telling first (may repeat; the caller
    deduplicates). ``None`` comes last for every value: an optional argument left out."""
    kind = type(value)
    if kind is bool:
        yield not value
    elif kind is int:
        yield from (0, 1, -1, value + 1, value - 1, -value, 2, 3, 4, 5)
        yield from (value * 2 + rng.randint(3, 9), _LARGE)
    elif kind is float:
        yield from (0.0, -1.0, value + 1.0, value - 1.0, -value, value / 2, value * 10 + 0.5)
    elif kind in (str, bytes):
        yield from _text_mutations(value)
    elif kind in (list, tuple):
        yield from (kind(items) for items in _sequence_mutations(list(value), rng))
    elif kind is dict:
        yield from _dict_mutations(value, rng)
    elif kind in (set, frozenset):
        items = sorted(value, key=repr)
        yield kind()
        if items:
            yield kind(items[1:])
    if value is not None:
        yield None


def _text_mutations(value: Any) -> Iterator[Any]:
    empty, space = value[:0], (b" " if isinstance(value, bytes) else " ")
    yield empty
    if not value:
        yield from ([b"a", b" ", b"a b "] if isinstance(value, bytes) else ["a", " ", "a b "])
        return
    first = value[:1]
    changed = (
        bytes([(first[0] + 1) % 256])
        if isinstance(value, bytes)
        else chr(ord(first) + 1 if first != "\uffff" else 65)
    )
    yield changed + value[1:]  # one character changed
    yield value[1:]  # one dropped
    yield value + value[-1:]  # one added
    yield value[::-1]
    yield space + value  # surrounding whitespace: strip, split and trim bugs
    yield value + space
    yield value.upper() if value.upper() != value else value.lower()
    yield value + value
    yield from _text_kinds(value)


def _text_kinds(value: Any) -> Iterator[Any]:
    """The value with a character of another kind: case, a digit, punctuation, a space inside,
    another script (``isalpha``, ``isdigit``, ``split`` and ``title`` bugs show on these)."""
    if isinstance(value, bytes):
        yield from (value + b"1", value + b"!", value[:1] + b" " + value[1:])
        return
    middle = len(value) // 2
    yield value.swapcase() if value.swapcase() != value else value.title()
    yield value[:middle] + " " + value[middle:]
    yield value + "1"
    yield value + "!"
    yield value[:middle] + ", " + value[middle:]
    yield value + "\u00e9"


def _sequence_mutations(items: list[Any], rng: random.Random) -> Iterator[list[Any]]:
    yield []
    if not items:  # no element to copy the type of: one of each kind (the caller may infer)
        yield from ([0], [1, 2], [2, 1, 1], ["a"], ["b", "a", "a"], [[1, 2], [3]], [1.5, -2.0])
        return
    yield items[1:]  # first dropped
    yield items[:-1]  # last dropped
    yield [*items, items[-1]]  # last duplicated
    yield [items[0], *items]  # first duplicated
    yield items[::-1]
    for variant in _first_few(mutations(items[0], rng), 3):  # the first element edited
        yield [variant, *items[1:]]
    if len(items) > 1:
        for variant in _first_few(mutations(items[-1], rng), 2):  # the last element edited
            yield [*items[:-1], variant]
    yield from _arrangements(items)


def _arrangements(items: list[Any]) -> Iterator[list[Any]]:
    """The same elements arranged another way: equal neighbours (ties: ``<`` against ``<=``),
    all equal, sorted, and numbers negated (sign and ``abs`` bugs)."""
    middle = len(items) // 2
    yield [*items[: middle + 1], items[middle], *items[middle + 1 :]]  # a middle one repeated
    yield [items[0]] * max(len(items), 2)
    with contextlib.suppress(TypeError):  # mixed types: no order
        yield sorted(items)
    if all(type(item) in (int, float) for item in items):
        yield [-item for item in items]


def _dict_mutations(value: dict[Any, Any], rng: random.Random) -> Iterator[dict[Any, Any]]:
    yield {}
    keys = list(value)
    if not keys:  # no entry to copy the types of: one of each kind
        yield from ({"a": 1}, {"a": 1, "b": 1}, {1: "a"}, {"a": [1, 2]}, {1: 2, 3: 4})
        return
    yield {k: v for k, v in value.items() if k != keys[0]}  # one entry dropped
    for variant in _first_few(mutations(value[keys[0]], rng), 2):  # one value edited
        yield {**value, keys[0]: variant}
    last = keys[-1]
    fresh = [k for k in _first_few(mutations(last, rng), 6) if _hashable(k) and k not in value]
    if fresh:  # one entry added: a new key of the last one's kind, with its value
        yield {**value, fresh[0]: value[last]}


def _hashable(value: Any) -> bool:
    """Whether ``value`` can be a dict key or a set element."""
    try:
        hash(value)
    except TypeError:
        return False
    return True


def _first_few(values: Iterator[Any], count: int) -> list[Any]:
    return [v for _, v in zip(range(count), (v for v in values if v is not None), strict=False)]


# Examples per type hint, boundary cases first.
_EXAMPLES: dict[str, list[Any]] = {
    "int": [0, 1, -1, 2, 7, 100],
    "float": [0.0, 1.5, -2.0, 0.1, 1e9],
    "complex": [0j, 1 + 2j],
    "bool": [True, False],
    "str": ["", "a", "ab", "abc", "Hello, World", "aab ba"],
    "bytes": [b"", b"a", b"abc"],
    "None": [None],
}
_SEQUENCES = {"list", "List", "Sequence", "Iterable", "Collection", "MutableSequence"}
_TUPLES = {"tuple", "Tuple"}
_SETS = {"set", "Set", "frozenset", "FrozenSet", "AbstractSet", "MutableSet"}
_MAPPINGS = {"dict", "Dict", "Mapping", "MutableMapping"}
_BARE: dict[str, list[Any]] = {
    **{name: [[], [1, 2, 3]] for name in _SEQUENCES},
    **{name: [(), (1, 2)] for name in _TUPLES},
}


def hint_values(hint: ast.expr | None, depth: int = 0) -> list[Any]:
    """Example values of a type hint's expression (``int``, ``list[int]``, ``str | None``,
    ``Optional[dict[str, int]]``, a string annotation); [] for a hint it does not know."""
    if hint is None or depth > 3:
        return []
    if isinstance(hint, ast.Constant):
        return _constant(hint.value, depth)
    if isinstance(hint, ast.BinOp) and isinstance(hint.op, ast.BitOr):  # int | None
        return _merged(hint_values(hint.left, depth + 1), hint_values(hint.right, depth + 1))
    if isinstance(hint, ast.Subscript):
        parts = hint.slice.elts if isinstance(hint.slice, ast.Tuple) else [hint.slice]
        return _generic(_name(hint.value), parts, depth)
    name = _name(hint)
    return list(_EXAMPLES.get(name) or _BARE.get(name, []))


def _constant(value: object, depth: int) -> list[Any]:
    """Examples of a string annotation (``"list[int]"``) or of ``None``."""
    if isinstance(value, str):
        try:
            return hint_values(ast.parse(value, mode="eval").body, depth + 1)
        except SyntaxError:
            return []
    return [None] if value is None else []


def _generic(name: str, parts: list[ast.expr], depth: int) -> list[Any]:
    """Examples of ``name[parts]``: a union, an optional, a collection or a mapping."""
    inner = [hint_values(part, depth + 1) for part in parts]
    if name in ("Optional", "Union"):
        return _merged(*inner, *([[None]] if name == "Optional" else []))
    if name in _TUPLES and len(parts) > 1 and not _is_ellipsis(parts[1]):  # tuple[int, str]
        return [tuple(values[0] for values in inner)] if all(inner) else []
    if name in _SEQUENCES | _TUPLES | _SETS and inner[0]:
        build = tuple if name in _TUPLES else set if name in _SETS else list
        try:
            return [build(sample) for sample in _samples(inner[0])]
        except TypeError:  # set[list[int]]: unhashable items, no example
            return []
    if name in _MAPPINGS and len(inner) == 2 and inner[0] and inner[1]:
        pairs = list(zip(inner[0][1:], inner[1][1:], strict=False))
        return [{}, dict(pairs[:1]), dict(pairs[:3])]
    return []


def _samples(items: list[Any]) -> list[list[Any]]:
    """Collections of example items: empty, one, several, the several reversed, a repeat."""
    several = items[1:4] or items[:1]
    return [[], items[1:2] or items[:1], several, several[::-1], [items[-1], items[-1]]]


def _merged(*groups: list[Any]) -> list[Any]:
    """Values of a union: the first of each member first, then the rest."""
    firsts = [group[0] for group in groups if group]
    rests = [value for group in groups for value in group[1:]]
    return firsts + rests


def _name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):  # typing.List, collections.abc.Sequence
        return node.attr
    return ""


def _is_ellipsis(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is Ellipsis
