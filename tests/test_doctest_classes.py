"""A class a doctest example defines runs against the module, as doctest runs it.

boltons' ``partial_ordering``, ``get_all_subclasses``, ``cachedmethod`` and ``gcutils.get_all``
and toolz's ``instanceproperty`` are documented by examples that define a class with (or for)
the function under test. In doctest that class is defined against the module; here it is defined
in the candidate's process when it hands itself to the module's code (a decorator, a base) or
holds data only, and reads no name of the test's own (`example_classes`); the tests hold it as a
candidate class. Any other class stays in the judge, where its logic is out of the candidate's
reach. Every honest case has a wrong twin that must
fail; all run in real containers.
"""

from __future__ import annotations

import pytest

from guardrail.gate import Gate
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

CODE = """
import gc


def subclasses(cls):
    return [c.__name__ for c in cls.__subclasses__()]


def instances(kind):
    return [o for o in gc.get_objects() if isinstance(o, kind)]


def described(cls):
    cls.describe = lambda self: f"{type(self).__name__} of {self.size}"
    return cls
"""
WRONG = CODE.replace("cls.__subclasses__()", "cls.__mro__[1:]").replace(
    "type(self).__name__", "'object'"
)


def example(source: str, want: str = "") -> str:
    return f"__doctest_example__({source!r}, {want!r})"


TESTS = [
    example("class A(object):\n    pass"),
    example("class B(A):\n    pass"),
    example("subclasses(A)", "['B']"),
    example("class Rat(object):\n    pass"),
    example("rats = [Rat() for _ in range(3)]"),
    example("len(instances(Rat))", "3"),
    example(
        "@described\nclass Box(object):\n    def __init__(self, size):\n        self.size = size"
    ),
    example("Box(3).describe()", "'Box of 3'"),
]


@pytest.mark.docker
def test_a_class_an_example_defines_is_the_candidates_and_the_wrong_twin_fails(gate: Gate) -> None:
    right, wrong = gate.verify([CODE, WRONG], Spec.build(TESTS, "subclasses"))
    assert right.status is Status.VERIFIED, right
    assert wrong.status is Status.FAILED, wrong
    assert [t.outcome for t in wrong.tests if t.outcome != "pass"] == ["FAIL", "FAIL"], wrong


@pytest.mark.docker
def test_a_class_that_reads_the_tests_own_names_stays_in_the_judge(gate: Gate) -> None:
    """Its body needs the test's function, which lives in the judge: defined there, it still
    works in the tests, and handing it to the candidate is unserialisable, never a failure."""
    tests = [
        example("def helper():\n    return 1"),
        example("class T(object):\n    x = helper()"),
        example("T.x", "1"),
        example("subclasses(T)", "[]"),
    ]
    (verdict,) = gate.verify([CODE], Spec.build(tests, "subclasses"))
    assert [t.outcome for t in verdict.tests][:3] == ["pass"] * 3, verdict
    assert verdict.tests[3].fault is Reason.UNSERIALISABLE, verdict


@pytest.mark.docker
def test_instances_of_a_candidate_defined_class_never_decide_a_comparison(gate: Gate) -> None:
    code = "def ordering(cls):\n    cls.__lt__ = lambda self, other: True\n    return cls\n"
    tests = [example("@ordering\nclass K(object):\n    pass"), example("K() < K()", "True")]
    (verdict,) = gate.verify([code], Spec.build(tests, "ordering"))
    assert verdict.status is Status.UNVERIFIABLE, verdict
    assert verdict.tests[1].fault is Reason.UNSERIALISABLE, verdict


HOSTILE = """
import builtins

_real = builtins.__build_class__


def _forge(func, name, *bases, **kw):
    cls = _real(func, name, *bases, **kw)
    cls.ok = lambda self, x: True  # every class this process builds now says yes
    return cls


builtins.__build_class__ = _forge


def f(x):
    return -1
"""


@pytest.mark.docker
def test_a_class_with_logic_of_the_tests_stays_out_of_the_candidates_reach(gate: Gate) -> None:
    """A test's checking class with methods of its own runs in the judge: a candidate that
    rewrites every class its process builds cannot make the check pass."""
    tests = [
        example("class Checker(object):\n    def ok(self, x):\n        return x == 42"),
        example("Checker().ok(f(1))", "True"),
    ]
    (verdict,) = gate.verify([HOSTILE], Spec.build(tests, "f"))
    assert verdict.status is Status.FAILED, verdict
    assert verdict.tests[1].outcome == "FAIL", verdict


@pytest.mark.docker
@pytest.mark.parametrize(
    "header",
    [
        "class P:\n    pass",  # a data-only class of the tests' own, defined in the candidate
        "from fractions import *",  # names the text cannot see
    ],
)
def test_no_class_with_logic_reaches_the_candidate_through_a_test_class_or_its_own_names(
    gate: Gate, header: str
) -> None:
    """Red-team finds: a checking class based on a test-defined class, a decorator that is the
    statement's own lambda, or a base from a star import was defined in the candidate's process,
    where a class-rewriting candidate made the check pass."""
    base = "(P)" if header.startswith("class") else "(Fraction)"
    tests = [
        example(header),
        example(f"class Checker{base}:\n    def ok(self, x):\n        return x == 42"),
        example("class Lam:\n    @(lambda fn: fn)\n    def ok(self, x):\n        return x == 42"),
        example("Checker().ok(f(1))", "True"),
        example("Lam().ok(f(1))", "True"),
    ]
    (verdict,) = gate.verify([HOSTILE], Spec.build(tests, "f"))
    assert verdict.status is not Status.VERIFIED, verdict
    assert not any(t.passed for t in verdict.tests[3:]), verdict  # FAIL, or judged unjudgeable
