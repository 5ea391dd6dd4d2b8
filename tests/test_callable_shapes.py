"""A test's function crosses with its shape: code that inspects the callables it is given
(``inspect.signature``, ``__code__.co_argcount``, a memoizer's ``functools.wraps``, boltons'
``copy_function``) gets the answers it gets in-process, and never the test's constants.

Each honest candidate must verify and its wrong twin fail, in real containers; the shapes the
stub builds are checked in-process against the real functions' signatures.
"""

from __future__ import annotations

import inspect
import types
from pathlib import Path
from typing import Any

import pytest

from guardrail.gate import Gate
from guardrail.sandbox.runner.judge_objects import JudgeObjects
from guardrail.sandbox.runner.signatures import describe, signed_stub
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

INSPECTING = """
import functools
import inspect
import types


def required(f):
    return sum(p.default is p.empty for p in inspect.signature(f).parameters.values())


def arity(f):
    return f.__code__.co_argcount + f.__code__.co_kwonlyargcount


def memoize(f):
    cache = {}

    @functools.wraps(f)
    def memoized(*args, **kwargs):
        key = (args, tuple(sorted(kwargs.items())))
        if key not in cache:
            cache[key] = f(*args, **kwargs)
        return cache[key]

    return memoized


def copy_function(f):
    return types.FunctionType(f.__code__, f.__globals__, f.__name__, f.__defaults__, f.__closure__)


def same(f):
    return f


def sees_constant(f, constant):
    return constant in f.__code__.co_consts
"""
WRONG = (
    INSPECTING.replace("p.default is p.empty", "p.default is not p.empty")
    .replace("co_argcount +", "co_argcount -")
    .replace("cache[key] = f(*args, **kwargs)", "cache[key] = f(*args)")
    .replace("f.__defaults__, f.__closure__", "None, f.__closure__")
    .replace("return f\n", "return lambda *a: f(*a)\n")
)
TESTS = [
    "assert required(lambda a, b=1, *c, d, e=2, **f: 0) == 4",
    "def g(x, /, y, *, z=3):\n    return x + y + z\nassert required(g) == 2 and arity(g) == 3",
    "def add(x, y, *, scale=1):\n    'adds'\n    return (x + y) * scale\nm = memoize(add)\n"
    "assert m(1, 2) == 3 and m(1, 2, scale=2) == 6\n"
    "assert (m.__name__, m.__doc__, m.__wrapped__ is add) == ('add', 'adds', True)",
    "assert copy_function(lambda a, b=5: a * b)(2) == 10",
    "k = lambda: 0\nassert same(k) is k and same(len) is len",
    "assert not sees_constant(lambda x=41: x + 9001, 9001)",
    "assert not sees_constant(lambda x=41: x + 41, 41)",
]


@pytest.mark.docker
def test_code_that_inspects_a_tests_function_verifies_and_its_wrong_twin_fails(
    gate: Gate,
) -> None:
    right, wrong = gate.verify([INSPECTING, WRONG], Spec.from_tests(TESTS))
    assert right.status is Status.VERIFIED, right
    assert wrong.status is Status.FAILED, wrong
    assert not any(t.passed for t in wrong.tests[:5]), wrong  # FAIL, or a TypeError as in-process


@pytest.mark.docker
def test_a_function_that_cannot_carry_its_shape_stays_a_plain_callback(gate: Gate) -> None:
    """Annotations or attributes would be missing from a stub: reading its code is refused."""
    code = "def arity(f):\n    return f.__code__.co_argcount\n"
    annotated = "def g(x: int) -> int:\n    return x\nassert arity(g) == 1"
    (verdict,) = gate.verify([code], Spec.from_tests([annotated]))
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE)


# Unannotated, as a test's function would be (annotations keep the plain stub).
EVERY_KIND = eval("lambda a, b, /, c, d=3, *args, e, f=5, **kw: (a, b, c, d, args, e, f, kw)")


@pytest.mark.parametrize(
    "function",
    [
        lambda: 0,
        lambda x, y=1: 0,
        lambda *a, **k: 0,
        lambda a, /, b=2: 0,
        lambda *, k: 0,
        lambda a, *, k=1: 0,
        EVERY_KIND,
    ],
)
def test_a_stub_has_the_functions_parameters_and_forwards_calls_as_bound(function: Any) -> None:
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
    description = describe(function)
    assert description is not None
    stub = signed_stub(
        description, function.__name__, lambda a, k: calls.append((a, k)), _refuse_defaults
    )
    assert stub is not None
    real = inspect.signature(function)
    shown = inspect.signature(stub)
    assert [(p.name, p.kind, p.default is p.empty) for p in shown.parameters.values()] == [
        (p.name, p.kind, p.default is p.empty) for p in real.parameters.values()
    ]
    assert stub.__code__.co_argcount == function.__code__.co_argcount
    assert isinstance(stub, types.FunctionType) and stub.__name__ == function.__name__
    assert stub.__code__.co_name == function.__code__.co_name


def test_generators_and_coroutines_keep_the_plain_stub() -> None:
    """A stub is neither: ``inspect.isgeneratorfunction`` would answer wrongly (red team)."""
    scope: dict[str, Any] = {}
    exec("def generator():\n    yield 1\n\nasync def coroutine():\n    return None\n", scope)
    generator, coroutine = scope["generator"], scope["coroutine"]
    assert describe(eval("lambda x: x")) is not None  # unannotated, as these are
    assert describe(generator) is None and describe(coroutine) is None


def test_forwarded_arguments_reach_the_real_function_as_the_caller_gave_them() -> None:
    description = describe(EVERY_KIND)
    assert description is not None
    stub = signed_stub(description, "g", lambda a, k: EVERY_KIND(*a, **k), _refuse_defaults)
    assert stub is not None
    calls: list[tuple[tuple[Any, ...], dict[str, Any]]] = [
        ((1, 2, 3), {"e": 4}),
        ((1, 2, 3, 4, 5, 6), {"e": 7, "z": 1}),
        ((1, 2), {"c": 9, "e": 1, "f": 2}),
        ((None, None, None, None, None), {"e": None, "f": None, "z": None}),  # None is a value
    ]
    for args, kwargs in calls:
        assert stub(*args, **kwargs) == EVERY_KIND(*args, **kwargs)
    # A stand-in default passed back in its own place is as good as omitted (a wrapper that
    # forwards its defaults, a function rebuilt from the stub's code and defaults).
    assert stub.__defaults__ is not None and stub.__kwdefaults__ is not None
    (d,), (f,) = stub.__defaults__, stub.__kwdefaults__.values()
    assert stub(1, 2, 3, d, e=4, f=f) == EVERY_KIND(1, 2, 3, e=4)
    rebuilt = types.FunctionType(stub.__code__, {}, "g", stub.__defaults__)
    rebuilt.__kwdefaults__ = stub.__kwdefaults__
    assert rebuilt(1, 2, 3, e=4) == EVERY_KIND(1, 2, 3, e=4)


class _DefaultsRead(Exception):  # noqa: N818 - what happened, not an error of its own
    """What the judge's refusal stands for in these in-process checks."""


def _refuse_defaults() -> None:
    raise _DefaultsRead


@pytest.mark.parametrize(
    "use",
    [
        lambda g: str(inspect.signature(g)),  # shows the value
        lambda g: g.__defaults__[1] == 2,
        lambda g: bool(g.__defaults__[0]),
        lambda g: hash(g.__defaults__[0]),
        lambda g: g.__defaults__[0].real,
        lambda g: [*g.__defaults__[0]],
        lambda g: g(1, g.__defaults__[0], 3, 4),  # where it would shift the next ones
        lambda g: g(1, 2, 3, g.__defaults__[0]),  # into *args
        lambda g: g(1, k=g.__defaults__[0]),  # into **kwargs
        lambda g: g(1, *g.__defaults__[::-1]),  # each in the other's place
    ],
)
def test_any_other_use_of_a_stand_in_default_is_a_read_of_the_tests_defaults(use: Any) -> None:
    """The test's default values never cross: using a stand-in for one asks the judge, which
    refuses (``unserialisable``); it never shows ``<default>`` or compares unequal."""
    function = eval("lambda a, b=1, c=2, *rest, **k: (a, b, c, rest, k)")
    description = describe(function)
    assert description is not None
    stub = signed_stub(description, "g", lambda a, k: function(*a, **k), _refuse_defaults)
    assert stub is not None
    assert stub(1) == (1, 1, 2, (), {})  # omitted: the real function's own defaults
    assert stub(1, stub.__defaults__[0], 3) == (1, 1, 3, (), {})  # type: ignore[index]
    with pytest.raises(_DefaultsRead):
        use(stub)


@pytest.mark.docker
def test_a_tests_function_inside_an_argument_is_not_a_change_to_it(gate: Gate) -> None:
    """toolz's ``thread_first(1, (add, 4), (pow, 2))``: a tuple holding the test's function or
    a builtin comes back as it went, so nothing is to be written back."""
    code = (
        "def thread(value, *forms):\n    for f, *rest in forms:\n"
        "        value = f(value, *rest)\n    return value\n"
    )
    tests = [
        "def add(x, y):\n    return x + y\nassert thread(1, (add, 4), (pow, 2), (max, 0)) == 25"
    ]
    right, wrong = gate.verify(
        [code, code.replace("f(value, *rest)", "f(*rest, value)")], Spec.from_tests(tests)
    )
    assert right.status is Status.VERIFIED, right
    assert wrong.status is Status.FAILED, wrong


def test_the_judge_takes_back_only_the_builtins_it_sent() -> None:
    """A builtin goes back by name only if the judge sent that one: the candidate cannot name
    ``exec`` into the judge's hands."""
    objects = JudgeObjects()
    assert objects.reference(len) == {"builtin": "builtins:len"}
    assert objects.builtin("builtins:len") is len
    for never_sent in ("builtins:exec", "builtins:open", 7):
        with pytest.raises(ValueError, match="never sent"):
            objects.builtin(never_sent)


@pytest.mark.docker
def test_a_bare_object_the_test_passes_is_an_object_to_the_candidate(gate: Gate) -> None:
    """boltons ``is_iterable(object())``, toolz ``flip(isinstance, int)`` over data holding an
    ``object()``: a sentinel crosses as an ``object()`` and comes back as the test's own."""
    code = (
        "def is_iterable(x):\n    try:\n        iter(x)\n    except TypeError:\n"
        "        return False\n    return True\n\n\n"
        "def ints(xs):\n    return [x for x in xs if isinstance(x, int)]\n\n\n"
        "def first(xs):\n    return xs[0]\n"
    )
    tests = [
        "assert is_iterable(object()) is False and is_iterable([1]) is True",
        "assert ints([1, object(), 'a', 2]) == [1, 2]",
        "marker = object()\nassert first([marker, 1]) is marker",
    ]
    wrong = code.replace("return False\n", "return True\n").replace("xs[0]", "object()")
    right, bad = gate.verify([code, wrong], Spec.from_tests(tests))
    assert right.status is Status.VERIFIED, right
    assert [t.outcome for t in bad.tests] == ["FAIL", "pass", "FAIL"], bad


@pytest.mark.docker
def test_a_candidate_using_a_tests_default_is_unserialisable_never_failed(gate: Gate) -> None:
    """In-process, ``str(inspect.signature(f))`` shows the test's default and ``==`` compares
    it; the value never crosses, so such a test cannot be judged (red team: the stub showed
    ``<default>`` and honest code failed). Forwarding a default in its own place still works."""
    code = (
        "import inspect\n\n\ndef describe_call(f):\n    return str(inspect.signature(f))\n\n\n"
        "def forward_defaults(f):\n    return f(*f.__defaults__)\n"
    )
    shown = "assert describe_call(lambda a, b=2: 0) == '(a, b=2)'"
    forwarded = "assert forward_defaults(lambda a=3, b=4: a - b) == -1"
    swapped = code.replace("f(*f.__defaults__)", "f(*f.__defaults__[::-1])")  # b's in a's place
    verdict, twin = gate.verify([code, swapped], Spec.from_tests([forwarded]))
    assert verdict.status is Status.VERIFIED, verdict
    assert (twin.status, twin.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE), twin
    (refused,) = gate.verify([code], Spec.from_tests([shown]))
    assert (refused.status, refused.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE)
    assert "__defaults__" in refused.tests[0].detail, refused.tests


CALLBACK_CHANGES = Path(__file__).parent / "snippets" / "callback_changes"
ACCUMULATING = [
    "assert transform([1, 2, 3], lambda acc, v, k: acc.append((k, v))) == [(0, 1), (1, 2), (2, 3)]",
    "assert transform({'a': 1, 'b': 2}, lambda acc, v, k: acc.update({k: v * 2}), {})"
    " == {'a': 2, 'b': 4}",
    "assert transform([1, 2, 3, 4], lambda acc, v, k: acc.append(v) or len(acc) < 2) == [1, 2]",
    "def note(seen, item):\n    seen.append(item)\n    if item == 2:\n        raise ValueError\n"
    "assert each_raising([1, 2, 3], note) == [1, 2]",
]


@pytest.mark.docker
def test_a_callbacks_changes_to_the_candidates_objects_reach_them(sandbox_runtime: str) -> None:
    """pydash ``transform`` returned ``[]``: the iteratee filled the judge's copy of the
    accumulator. Its changes (also before it raised) are written back to the candidate's own
    objects; a change that cannot be copied exactly leaves the test unjudged, never failed."""
    from guardrail.sandbox.base import Job
    from guardrail.sandbox.docker import DockerSandbox

    honest = (CALLBACK_CHANGES / "transform.py").read_text()
    wrong = (CALLBACK_CHANGES / "transform_wrong.py").read_text()
    specs = [Spec.from_tests([test]) for test in ACCUMULATING]
    nested = Spec.from_tests(["assert transform([1], lambda acc, v, k: acc.append([v])) == [[1]]"])
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        right = sandbox.run([Job(honest, spec) for spec in specs])
        copied = sandbox.run([Job(wrong, spec) for spec in specs])
        (unjudged,) = sandbox.run([Job(honest, nested)])
    for test, verdict in zip(ACCUMULATING, right, strict=True):
        assert (verdict.status, verdict.reason) == (Status.VERIFIED, Reason.PASSED), (test, verdict)
    for test, verdict in zip(ACCUMULATING, copied, strict=True):
        assert (verdict.status, verdict.reason) == (Status.FAILED, Reason.TESTS_FAILED), (
            test,
            verdict,
        )
    assert (unjudged.status, unjudged.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE)


FUNCTION_ATTRIBUTES = Path(__file__).parent / "snippets" / "function_attributes"
MARKED = [
    "def f():\n    pass\nassert register(f) is f and f.registered is True",
    # Annotated: it crosses as a plain callback stub, not a function of the same shape.
    "def g(x: int) -> int:\n    return x\nregister(g)\nassert g.registered is True",
    "def f():\n    pass\nmark(tag='x', sizes=[1, 2])(f)\nassert (f.tag, f.sizes) == ('x', [1, 2])",
    "def f():\n    pass\nregister(f)\nassert is_registered(f)",
    "def g(x: int) -> int:\n    return x\nregister(g)\nassert is_registered(g)",
    # Set by the test itself: the candidate reads it as in-process.
    "def f():\n    pass\nf.registered = True\nassert is_registered(f)",
]


@pytest.mark.docker
def test_attributes_the_candidate_sets_on_a_tests_function_are_the_tests(
    sandbox_runtime: str,
) -> None:
    """``register(f)`` setting ``f.registered``: the attribute landed on the candidate's
    stand-in only (or raised, on a plain stub), and the test's ``f.registered`` failed."""
    from guardrail.sandbox.base import Job
    from guardrail.sandbox.docker import DockerSandbox

    honest = (FUNCTION_ATTRIBUTES / "register.py").read_text()
    wrong = (FUNCTION_ATTRIBUTES / "register_wrong.py").read_text()
    specs = [Spec.from_tests([test]) for test in MARKED]
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        right = sandbox.run([Job(honest, spec) for spec in specs])
        marked_wrong = sandbox.run([Job(wrong, spec) for spec in specs])
    for test, verdict in zip(MARKED, right, strict=True):
        assert (verdict.status, verdict.reason) == (Status.VERIFIED, Reason.PASSED), (test, verdict)
    for test, verdict in zip(MARKED, marked_wrong, strict=True):
        assert (verdict.status, verdict.reason) == (Status.FAILED, Reason.TESTS_FAILED), (
            test,
            verdict,
        )
