"""Doctest display of objects that are not plain data: the object's own text, as doctest has it.

A doctest compares the text an example shows or prints. For a candidate object (a class of the
candidate's module) that text is the object's own ``repr``/``str``, computed in the
candidate's process (`guardrail.sandbox.runner.showing`); a ``datetime`` is plain data, shown
by the judge. Every honest case here has a wrong twin
that must fail, and the hostile ones (an object that shows itself as plain data, a text outside a
doctest) must never verify. All run in real containers.
"""

from __future__ import annotations

import pytest

from guardrail.gate import Gate
from guardrail.sandbox.runner.showing import MAX_SHOWN, looks_plain
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

BAG = """
import datetime


class Bag:
    def __init__(self, items):
        self.items = list(items)

    def __repr__(self):
        return f"Bag({self.items!r})"

    def __str__(self):
        return "bag of " + ", ".join(map(str, self.items))


def bag(*items):
    return Bag(items)


def day_after(year, month, day):
    return datetime.date(year, month, day) + datetime.timedelta(days=1)
"""
BAG_WRONG = BAG.replace("return Bag(items)", "return Bag(items[1:])").replace("days=1", "days=2")


def example(source: str, want: str = "") -> str:
    return f"__doctest_example__({source!r}, {want!r})"


DISPLAYS = [
    example("bag(1, 2)", "Bag([1, 2])"),  # shown by the display hook
    example("print(bag(1, 2))", "bag of 1, 2"),  # printed: its str
    example("[bag(1), 3]", "[Bag([1]), 3]"),  # inside a container the judge shows itself
    example("f'{bag(4)}!'", "'bag of 4!'"),  # format()
    example("day_after(2024, 2, 28)", "datetime.date(2024, 2, 29)"),  # plain data: the judge's
    example("b = bag(5)") + "\n" + example("b.items", "[5]"),  # plain data read: no text
]


@pytest.mark.docker
def test_a_candidate_object_shows_its_own_text_in_a_doctest_and_its_wrong_twin_fails(
    gate: Gate,
) -> None:
    right, wrong = gate.verify([BAG, BAG_WRONG], Spec.from_tests(DISPLAYS))
    assert right.status is Status.VERIFIED, right
    assert [t.shown_by_candidate for t in right.tests] == [True] * 4 + [False, False]
    assert wrong.status is Status.FAILED, wrong
    assert [t.outcome for t in wrong.tests[:5]] == ["FAIL"] * 5, wrong


FORGED = """
class A:
    def __init__(self, text):
        self.text = text

    def __repr__(self):
        return self.text

    __str__ = __repr__


def f(x):
    return A(TEXT)
"""


@pytest.mark.docker
@pytest.mark.parametrize(
    ("text", "test"),
    [
        ("[3, 3]", example("f(3)", "[3, 3]")),  # shown as a list it is not
        ("[3, 3]", example("print(f(3))", "[3, 3]")),
        ("6", example("f(3)", "6")),
        ("'33'", example("[f(3)]", "['33']")),  # inside a container too
        ("frozenset({3})", example("f(3)", "frozenset({3})")),  # a plain type's constructor
        ("datetime.date(2024, 2, 29)", example("f(3)", "datetime.date(2024, 2, 29)")),
        ("[3, 3]", "assert repr(f(3)) == '[3, 3]'"),  # outside a doctest: never its text
        ("[3, 3]", "assert str(f(3)) == '[3, 3]'"),
        ("[3, 3]", "assert f'{f(3)}' == '[3, 3]'"),
    ],
)
def test_an_object_never_passes_for_plain_data_nor_shows_text_outside_a_doctest(
    gate: Gate, text: str, test: str
) -> None:
    code = FORGED.replace("TEXT", repr(text))
    (verdict,) = gate.verify([code], Spec.from_tests([test]))
    assert verdict.status is Status.UNVERIFIABLE, verdict
    assert verdict.tests[0].fault is Reason.UNSERIALISABLE, verdict
    assert not verdict.tests[0].shown_by_candidate


@pytest.mark.docker
def test_a_text_past_the_cap_or_not_a_str_is_never_compared(gate: Gate) -> None:
    huge = FORGED.replace("TEXT", f"'<' + 'x' * {MAX_SHOWN} + '>'")
    (verdict,) = gate.verify([huge], Spec.from_tests([example("f(3)", "<...>")]))
    assert verdict.tests[0].fault is Reason.UNSERIALISABLE, verdict
    raising = FORGED.replace("TEXT", "'<A>'").replace("return self.text", "raise ValueError('no')")
    (verdict,) = gate.verify([raising], Spec.from_tests([example("f(3)", "<A>")]))
    assert verdict.status is Status.FAILED, verdict  # as doctest: the example raised
    assert verdict.tests[0].outcome == "ERROR:ValueError", verdict


def test_plain_looking_text_is_told_apart() -> None:
    for plain in ("[3, 3]", " 6", "'a'", "None", "{1: 2}", "deque([1])", "Fraction(1, 2)"):
        assert looks_plain(plain), plain
    for shown in ("Bag([1])", "datetime.tzinfo(1)", "<A object>", "bag of 1", "[" * 50):
        assert not looks_plain(shown), shown
