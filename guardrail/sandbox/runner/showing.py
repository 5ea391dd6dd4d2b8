"""Doctest display: the one place where a candidate object's own text is what the judge compares.

A doctest compares text. When an example shows or prints an object that is not plain data (an
``OrderedMultiDict``, a ``datetime``, a ``partial``), the text doctest compares is that object's
``repr``/``str``, computed by the object's own class. The judge does the same, and nothing more:

* only while a doctest example runs (`displaying`), ``repr``, ``str`` and ``format`` of a
  candidate object are asked of the candidate, which computes them in its own process; everywhere
  else (an ``assert`` test, the judge's own messages) they stay refused (``unserialisable``);
* what comes back must be a ``str`` of at most `MAX_SHOWN` characters, and must not read as
  plain data (`looks_plain`: a Python literal, or the text of a type the codec sends as data,
  ``frozenset({1})``, ``deque([])``...), or the test is ``unserialisable``: a value that is plain
  data crosses as data, so an object that shows itself as ``[3, 3]`` is passing for one;
* the text is compared, as plain text, by the judge's mirror of doctest's output checker, so the
  candidate still never decides an equality, a hash or a truth value;
* a test passed this way says so (``TestOutcome.shown_by_candidate``).

Why it keeps the sandbox's promise: a text is plain data, and a candidate cannot see the
expected output (it lives in the judge), so a class whose ``repr`` fakes the answer must already
know it, which is code fitted to its tests (out of scope, as a function that returns its
docstring's answers is); a single-line mutant shows the text its own class computes, as the real
doctest would. A wrong ``__eq__`` that says True to everything has no counterpart here.
"""

from __future__ import annotations

import ast
import contextlib
import re
from collections.abc import Iterator

__all__ = ["MAX_SHOWN", "displaying", "looks_plain", "permitted", "record_use", "take_used"]

MAX_SHOWN = 100_000  # characters of one candidate object's text
# How the codec's plain types that are not literals show themselves (``codec``).
_PLAIN_CONSTRUCTORS = re.compile(
    r"\s*(frozenset|range|slice|bytearray|deque|Counter|OrderedDict|defaultdict|Decimal|Fraction"
    r"|datetime\.(date|time|datetime|timedelta|timezone))\("
)

_state = {"depth": 0, "used": False}


@contextlib.contextmanager
def displaying() -> Iterator[None]:
    """While a doctest example runs: candidate objects may show their own text."""
    _state["depth"] += 1
    try:
        yield
    finally:
        _state["depth"] -= 1


def looks_plain(text: str) -> bool:
    """Whether ``text`` reads as a value the codec would have sent as plain data."""
    if _PLAIN_CONSTRUCTORS.match(text):
        return True
    try:
        ast.literal_eval(text.strip())
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


def permitted() -> bool:
    return _state["depth"] > 0


def record_use() -> None:
    _state["used"] = True


def take_used() -> bool:
    """Whether a candidate's text was shown since the last call (the judge asks once per test)."""
    used = bool(_state["used"])
    _state["used"] = False
    return used
