"""Alias binding only when safe: the host binds the tests' name to another function only when
nothing defines that name and the function's signature accepts every call the tests make."""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.binding import plan_binding
from guardrail.context import context_metadata
from guardrail.gate import Candidate, Gate, GatedCandidate, Policy, apply_policy
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict

TOOLS = Path(__file__).parent / "snippets" / "context" / "ctxpkg" / "tools.py"
FIRST_TRUE = (
    "def first_true(iterable, default=None, pred=None):\n"
    "    return next(filter(pred, iterable), default)\n"
)
CLAMP = "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n"


def spec(*tests: str, entry_point: str) -> Spec:
    return Spec.build(list(tests), entry_point)


def test_the_name_the_candidate_defines_is_bound_to_itself() -> None:
    plan = plan_binding(CLAMP, spec("assert clamp(5, 0, 3) == 3", entry_point="clamp"))
    assert (plan.bind, plan.alias) == ({"clamp": "clamp"}, None)


def test_a_method_snippet_binds_its_class() -> None:
    plan = plan_binding(
        "def area(self):\n    return self.w * self.h\n",
        spec("assert Box(2, 3).area() == 6", entry_point="Box"),
        qualified_name="Box.area",
        module_source="class Box:\n    def area(self):\n        return 0\n",
    )
    assert (plan.bind, plan.alias) == ({"Box": "Box"}, None)


def test_no_alias_when_the_module_defines_the_tests_name() -> None:
    """``first_true`` was verified for a ``first`` query; its module defines ``first``."""
    plan = plan_binding(
        FIRST_TRUE,
        spec("assert first([0, 7]) == 0", entry_point="first"),
        qualified_name="first_true",
        module_source=TOOLS.read_text(),
    )
    assert plan.bind is None
    assert "'first'" in plan.refusal
    assert "first_true(iterable, default=None, pred=None)" in plan.refusal
    assert "module defines" in plan.refusal


@pytest.mark.parametrize(
    ("test", "why"),
    [
        ("assert limit(5, 10) == 5", "needs argument 'hi'"),
        ("assert limit(5, 0, 10, 1) == 5", "takes at most 3 positional arguments"),
        ("assert limit(5, low=0, high=10) == 5", "has no parameter 'low'"),
        ("assert limit(5, x=1, lo=0, hi=3) == 1", "would get 'x' twice"),
        ("assert list(map(limit, [1])) == [1]", "as a value"),
    ],
)
def test_no_alias_when_a_call_does_not_fit_the_signature(test: str, why: str) -> None:
    """``clamp`` was verified against a test calling a name it does not have."""
    plan = plan_binding(CLAMP, spec(test, entry_point="limit"))
    assert plan.bind is None
    assert why in plan.refusal
    assert "limit" in plan.refusal
    assert "clamp(x, lo, hi)" in plan.refusal


@pytest.mark.parametrize(
    ("code", "test"),
    [
        (CLAMP, "assert limit(5, 0, 10) == 5"),
        (CLAMP, "assert limit(x=5, hi=10, lo=0) == 5"),
        (CLAMP, "assert limit(*[5, 0, 10]) == 5"),
        ("def total(*xs):\n    return sum(xs)\n", "assert limit(1, 2, 3, 4) == 10"),
        ("def opts(**kw):\n    return len(kw)\n", "assert limit(a=1, b=2) == 2"),
        ("def req(*, key):\n    return key\n", "assert limit(key=1) == 1"),
    ],
)
def test_an_alias_when_nothing_defines_the_name_and_every_call_fits(code: str, test: str) -> None:
    plan = plan_binding(code, spec(test, entry_point="limit"))
    assert plan.bind is not None
    assert plan.alias is not None
    assert plan.bind == {"limit": plan.alias}


def test_a_name_the_tests_define_themselves_binds_what_they_call_of_the_candidate() -> None:
    tests = "from collections import deque\nd = deque([1], maxlen=2)\npush_front(d, 0)\n"
    push = "def push_front(d, x):\n    d.appendleft(x)\n"
    plan = plan_binding(push, spec(tests + "assert list(d) == [0, 1]", entry_point="deque"))
    assert (plan.bind, plan.alias) == ({"push_front": "push_front"}, None)
    other = plan_binding(CLAMP, spec(tests + "assert d", entry_point="deque"))
    assert other.bind is None
    assert "define 'deque' themselves" in other.refusal


def test_the_tests_import_of_the_name_from_the_package_is_not_the_plain_function() -> None:
    """toolz ``do``: its doctest imports the curried ``do`` from ``toolz.curried``; binding the
    name to the plain function judged what the examples never call (a correct function came out
    failed). Refused for want of context, never bound; from elsewhere the candidate is bound."""
    code = "def do(func, x):\n    func(x)\n    return x\n"
    curried = Spec.build(
        ["__doctest_example__('do(log.append)(1)', '1')"], "do", "from toolz.curried import do"
    )
    refused = plan_binding(code, curried, module_source=code, package="toolz")
    assert refused.bind is None and refused.lacks_context
    assert "toolz.curried" in refused.refusal
    assert plan_binding(code, curried, module_source=code, package="other").bind == {"do": "do"}
    assert plan_binding(code, curried).bind == {"do": "do"}  # no context: no package to wrap it
    # From its own module the import is the candidate itself (boltons' ``wraps`` docstring).
    own = Spec.build(
        ["__doctest_example__('do(print, 1)', '1\\n1')"], "do", "from toolz.f import do"
    )
    assert plan_binding(code, own, module_source=code, package="toolz", module="toolz.f").bind == {
        "do": "do"
    }


def test_no_alias_among_several_plausible_functions_or_through_a_star_import() -> None:
    two = CLAMP + "\n\ndef other(x, lo, hi):\n    return x\n"
    assert plan_binding(two, spec("assert limit(1, 0, 2) == 1", entry_point="limit")).bind is None
    starred = plan_binding(
        CLAMP,
        spec("assert limit(1, 0, 2) == 1", entry_point="limit"),
        qualified_name="clamp",
        module_source="from elsewhere import *\n" + CLAMP,
    )
    assert starred.bind is None  # the star import may define 'limit'


def _judged(rank: int, status: Status, reason: Reason, alias: str | None = None) -> GatedCandidate:
    verdict = Verdict(status=status, reason=reason, alias=alias)
    return GatedCandidate(
        candidate=Candidate(code=f"# {rank}"), verdict=verdict, retrieval_rank=rank
    )


def test_policy_ranks_aliases_below_exact_names_and_missing_context_last() -> None:
    judged = [
        _judged(0, Status.VERIFIED, Reason.PASSED, alias="clamp"),
        _judged(1, Status.UNVERIFIABLE, Reason.MISSING_CONTEXT),
        _judged(2, Status.UNVERIFIABLE, Reason.NO_TESTS),
        _judged(3, Status.VERIFIED, Reason.PASSED),
        _judged(4, Status.UNVERIFIABLE, Reason.MISSING_DEPENDENCY),
        _judged(5, Status.UNVERIFIABLE, Reason.UNSERIALISABLE),
    ]
    ranks = {p: [g.retrieval_rank for g in apply_policy(judged, p)] for p in Policy}
    assert ranks[Policy.RERANK] == [3, 0, 2, 1, 4, 5]
    assert ranks[Policy.FILTER] == [3, 0]
    assert ranks[Policy.ABSTAIN] == [3, 0, 2]


@pytest.mark.docker
def test_binding_for_real_the_alias_comes_from_the_host_plan(gate: Gate) -> None:
    in_module = {**context_metadata(TOOLS), "qualified_name": "first_true"}
    first_query = spec("assert first([0, 7]) == 0", entry_point="first")
    (unrelated,) = gate.verify([FIRST_TRUE], first_query, metadata=[in_module])
    assert (unrelated.status, unrelated.reason) == (Status.ERROR, Reason.MISSING_ENTRY_POINT)
    assert unrelated.tests == ()  # refused before anything ran
    aliased, wrong_call = gate.verify(
        [CLAMP, CLAMP],
        [
            spec("assert limit(5, 0, 3) == 3", "assert limit(-1, 0, 3) == 0", entry_point="limit"),
            spec("assert limit(5, 3) == 3", entry_point="limit"),
        ],
    )
    assert (aliased.status, aliased.alias) == (Status.VERIFIED, "clamp")
    assert wrong_call.reason is Reason.MISSING_ENTRY_POINT
    assert "needs argument 'hi'" in wrong_call.message
    (again,) = gate.verify(
        [CLAMP],
        spec("assert limit(5, 0, 3) == 3", "assert limit(-1, 0, 3) == 0", entry_point="limit"),
    )
    assert (again.cached, again.alias) == (True, "clamp")  # the cache keeps the host's alias


PEEKABLE = (
    "class peekable:\n"
    "    def peek(self):\n        return 0\n"
    "    def prepend(self, *items):\n        pass\n"
    "    def __len__(self):\n        return 0\n"
    "    def _calc_top(self):\n        return 0\n"
    "    top = property(_calc_top)\n"
    "def make(xs):\n    return peekable(xs)\n"
    "def first(xs):\n    return xs[0]\n"
)
PEEK = "def peek(self):\n    return self._cache[0]\n"


@pytest.mark.parametrize(
    ("qualified_name", "tests", "entry_point"),
    [
        ("peekable.peek", ["assert peekable([1]).peek() == 1"], "peekable"),
        ("peekable.peek", ["assert make([1]).peek() == 1"], "make"),  # a module factory
        (
            "peekable.peek",
            ["__doctest_example__('p = make([1])')", "__doctest_example__('p.peek()', '1')"],
            "make",
        ),
        ("peekable.__len__", ["assert len(peekable([1])) == 1"], "peekable"),
        ("peekable.__init__", ["assert list(peekable([1])) == [1]"], "peekable"),
        ("peekable._calc_top", ["assert peekable([1]).top == 1"], "peekable"),  # class alias
    ],
)
def test_a_method_binds_the_name_its_tests_reach_it_by(
    qualified_name: str, tests: list[str], entry_point: str
) -> None:
    plan = plan_binding(
        PEEK,
        spec(*tests, entry_point=entry_point),
        qualified_name=qualified_name,
        module_source=PEEKABLE,
    )
    assert (plan.bind, plan.alias) == ({entry_point: entry_point}, None)


@pytest.mark.parametrize(
    ("qualified_name", "tests", "entry_point", "why"),
    [  # the tests pass on the module whatever the method says: never verified through them
        ("peekable.prepend", ["assert peekable([1]).peek() == 1"], "peekable", "never reach"),
        ("peekable.peek", ["assert first([1]) == 1"], "first", "never reach"),
        ("peekable.__len__", ["assert len([1]) == 1", "assert first([1])"], "first", "never"),
        ("peekable.__reduce__", ["assert peekable([1])"], "peekable", "never reach"),
        ("peekable.peek", ["assert other([1]).peek() == 1"], "other", "does not define"),
    ],
)
def test_a_method_is_refused_when_its_tests_do_not_reach_it(
    qualified_name: str, tests: list[str], entry_point: str, why: str
) -> None:
    plan = plan_binding(
        PEEK,
        spec(*tests, entry_point=entry_point),
        qualified_name=qualified_name,
        module_source=PEEKABLE,
    )
    assert plan.bind is None
    assert why in plan.refusal
    assert qualified_name in plan.refusal or "'other'" in plan.refusal
