"""Values that are not plain data, judged honestly: handles, callbacks, exceptions with their
args, printed output, and the candidate's module globals.

Every case has an honest candidate (must verify) and a wrong twin (must fail, in-process as
here); the hostile ones must never verify. All run in real containers; the runner's processes
driven directly, with job fields set by hand, are in `test_handles_inprocess`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.gate import Gate
from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.runner.mirrors import MAX_KEPT
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

SNIPPETS = Path(__file__).resolve().parent / "snippets"
CHUNKED = (
    "def chunked(xs, n):\n    for i in range(0, len(xs), n):\n        yield list(xs[i:i + n])\n"
)
NATURALS = "def naturals():\n    n = 0\n    while True:\n        yield n\n        n += 1\n"
COUNTER = (
    "class Counter:\n    def __init__(self, start):\n        self.value = start\n"
    "    def incr(self, by=1):\n        self.value += by\n        return self\n"
    "    def __len__(self):\n        return self.value\n"
    "    def __contains__(self, x):\n        return 0 <= x < self.value\n"
    "    def __getitem__(self, i):\n        return i * STEP\n\n"
    "STEP = 10\n\n\ndef make_counter(start=0):\n    return Counter(start)\n\n\n"
    "def value_of(counter):\n    return counter.value\n"
)

CLASSES = (
    "class Point:\n    label = 'p'\n    def __init__(self, n):\n        self.n = n\n"
    "    def move(self):\n        return self\n    @property\n    def size(self):\n"
    "        return 1\n\n\nclass Adder:\n    def __call__(self, x):\n        return x + 1\n\n\n"
    "def make(n):\n    return Point(n)\n\n\ndef adder():\n    return Adder()\n\n\n"
    "def fresh():\n    class Fresh:\n        pass\n    return Fresh()\n\n\n"
    "def attrs(cls):\n    return iter(vars(cls).items())\n"
)
WRAPS = (
    "import functools\n\ndef describe(f):\n"
    "    return (f.__name__, f.__doc__, f.__module__, getattr(f, '__wrapped__', None))\n\n"
    "def twice(f):\n    @functools.wraps(f)\n    def inner(*a):\n        return f(*a) * 2\n"
    "    return inner\n\ndef make(factory):\n    d = factory()\n    d['a'] = 1\n"
    "    return issubclass(factory, dict), dict(d)\n"
)

DRAINED = (
    "def failing(n):\n    yield from range(n)\n    if n:\n        raise ValueError('boom', n)\n\n"
    "def noisy(n):\n    for i in range(n):\n        print('i', i)\n        yield i\n"
)
COPIED = (
    "from collections import deque\nfrom itertools import count, islice\n\n"
    "def ilen(iterable):\n    counter = count()\n    deque(zip(iterable, counter), maxlen=0)\n"
    "    return next(counter)\n\ndef take(n, it):\n    return list(islice(it, n))\n\n"
    "def lazy(it):\n    for x in it:\n        yield x * 10\n"
)
REGISTRY = (SNIPPETS / "judge" / "registry_module.py").read_text()  # module globals
# name: (tests, honest candidate, wrong twin)
CASES: dict[str, tuple[list[str], str, str]] = {
    "generator": (
        [
            "assert list(chunked([1, 2, 3, 4, 5], 2)) == [[1, 2], [3, 4], [5]]",
            "assert list(chunked([], 3)) == []",
            "out = []\nfor chunk in chunked('abc', 2):\n    out.append(chunk)\n"
            "assert out == [['a', 'b'], ['c']]",
            "it = chunked([1], 1)\nassert next(it) == [1] and next(it, 'end') == 'end'",
            "data = [1, 2, 3]\nassert list(chunked(data, 3)) == [[1, 2, 3]] and data == [1, 2, 3]",
        ],
        CHUNKED,
        CHUNKED.replace("xs[i:i + n]", "xs[i:i + n - 1]"),
    ),
    "infinite_generator": (
        [
            "from itertools import islice\nassert list(islice(naturals(), 3)) == [0, 1, 2]",
            "g = naturals()\nassert next(g) == 0 and next(g) == 1 and iter(g) is g",
            "assert [n for n, _ in zip(naturals(), range(4))] == [0, 1, 2, 3]",
        ],
        NATURALS,
        NATURALS.replace("n = 0", "n = 1"),
    ),
    "map_filter_islice_objects": (
        [
            "assert list(evens(7)) == [0, 2, 4, 6]",
            "assert list(labels(3)) == ['0', '1', '2']",
            "assert list(head([5, 6, 7], 2)) == [5, 6]",
            "assert sorted(evens(5), reverse=True) == [4, 2, 0] and sum(evens(5)) == 6",
        ],
        "import itertools\n\ndef evens(n):\n    return filter(lambda x: x % 2 == 0, range(n))\n\n"
        "def labels(n):\n    return map(str, range(n))\n\n"
        "def head(xs, n):\n    return itertools.islice(xs, n)\n",
        "import itertools\n\ndef evens(n):\n    return filter(lambda x: x % 2, range(n))\n\n"
        "def labels(n):\n    return map(str, range(n))\n\n"
        "def head(xs, n):\n    return itertools.islice(xs, n + 1)\n",
    ),
    "object_attributes_methods_items": (
        [
            "c = make_counter(2)\nassert c.value == 2 and c.incr().value == 3 and len(c) == 3",
            "c = make_counter()\nc.value = 5\nassert c.incr(by=2).value == 7",
            "c = make_counter(3)\nassert 2 in c and 3 not in c and c[4] == 40",
            "c = make_counter(4)\nassert value_of(c.incr(by=3)) == 7 and value_of(c) == 7",
        ],
        COUNTER,
        COUNTER.replace("self.value += by", "self.value += 1"),
    ),
    "callbacks_and_builtins_by_name": (
        [
            'assert sorted_by(["bb", "a"], key=len) == ["a", "bb"]',
            'assert sorted_by(["b", "A", "c"], key=str.lower) == ["A", "b", "c"]',
            "assert list(map_if([1, 2, 3], lambda x: x > 1, lambda x: x * 10)) == [1, 20, 30]",
            "def shout(s):\n    return s.upper()\n\nassert list(map_if(['a', 'bc'], len, shout))"
            " == ['A', 'BC']",
            "from operator import itemgetter\n"
            "assert sorted_by([(1, 'b'), (2, 'a')], key=itemgetter(1)) == [(2, 'a'), (1, 'b')]",
        ],
        "def sorted_by(xs, key):\n    return sorted(xs, key=key)\n\n"
        "def map_if(xs, pred, fn):\n    return (fn(x) if pred(x) else x for x in xs)\n",
        "def sorted_by(xs, key):\n    return sorted(xs, key=key)\n\n"
        "def map_if(xs, pred, fn):\n    return (fn(x) for x in xs)\n",
    ),
    "nested_callbacks_and_test_iterators": (
        [
            "assert apply_twice(lambda x: double(x), 3) == 12",
            "assert apply_twice(lambda x: apply_twice(double, x), 1) == 16",
            "assert total(iter([1, 2, 3])) == 6 and total(x * x for x in range(3)) == 5",
            "assert safe_call(lambda: 1 / 0) == 'caught'",
        ],
        "def double(x):\n    return 2 * x\n\ndef apply_twice(f, x):\n    return f(f(x))\n\n"
        "def total(items):\n    return sum(items)\n\n"
        "def safe_call(f):\n    try:\n        return f()\n    except ZeroDivisionError:\n"
        "        return 'caught'\n",
        "def double(x):\n    return 2 * x\n\ndef apply_twice(f, x):\n    return f(x)\n\n"
        "def total(items):\n    return sum(items)\n\n"
        "def safe_call(f):\n    return f()\n",
    ),
    "exception_args": (
        [
            "try:\n    lookup({}, 'k')\nexcept KeyError as e:\n"
            "    assert e.args == ('k',) and str(e) == \"'k'\"\nelse:\n    raise AssertionError",
            "try:\n    parse('x1')\nexcept ValueError as e:\n    assert e.args == ('bad', 'x1')\n"
            "else:\n    raise AssertionError",
        ],
        "def lookup(d, k):\n    return d[k]\n\n"
        "def parse(s):\n    if not s.isdigit():\n        raise ValueError('bad', s)\n"
        "    return int(s)\n",
        "def lookup(d, k):\n    return d[k.upper()]\n\n"
        "def parse(s):\n    if not s.isdigit():\n        raise ValueError('bad')\n"
        "    return int(s)\n",
    ),
    "printed_output": (
        [
            "import io, sys\nold, sys.stdout = sys.stdout, io.StringIO()\n"
            "try:\n    greet('ann')\n    seen = sys.stdout.getvalue()\n"
            "finally:\n    sys.stdout = old\n"
            "assert seen == 'hello ann\\n', seen",
            "import io, sys\nold, sys.stdout = sys.stdout, io.StringIO()\n"
            "try:\n    each([1, 2], lambda x: print('cb', x))\n    seen = sys.stdout.getvalue()\n"
            "finally:\n    sys.stdout = old\n"
            "assert seen == 'item 1\\ncb 1\\nitem 2\\ncb 2\\n', seen",
        ],
        "def greet(name):\n    print('hello', name)\n\n"
        "def each(xs, f):\n    for x in xs:\n        print('item', x)\n        f(x)\n",
        "def greet(name):\n    print('hello', name.title())\n\n"
        "def each(xs, f):\n    for x in xs:\n        f(x)\n        print('item', x)\n",
    ),
    # boltons mro_items, make_sentinel: callable() and type identity are the candidate's classes'
    "classes_callability_and_type_identity": (
        [
            "assert not callable(make(1)) and callable(adder()) and adder()(2) == 3",
            "assert type(make(1)) is type(make(2)) and type(make(1)) == type(make(2))",
            "assert type(fresh()) != type(fresh()) and type(fresh()) is not type(fresh())",
            "s = make(4)\nassert isinstance(s, Point) and type(s) is Point and s is s\n"
            "assert Point(6).n == 6 and type(s).__name__ == 'Point' and type(s)(7).n == 7\n"
            "assert not isinstance(adder(), Point) and issubclass(Point, object)",
            "assert sorted(k for k, v in attrs(Point) if k[0] != '_' and not callable(v))"
            " == ['label', 'size']",
        ],
        CLASSES,
        CLASSES.replace("return Point(n)", "return Adder()").replace(
            "class Fresh:\n        pass\n    return Fresh()", "return Adder()"
        ),
    ),
    # boltons copy_function: what a test's callable shows the candidate (functools.wraps)
    "a_test_callables_name_doc_and_module": (
        [
            "def double(x):\n    'Twice.'\n    return 2 * x\n\n"
            "assert describe(double) == ('double', 'Twice.', '__judge__', None)",
            "def double(x):\n    'Twice.'\n    return 2 * x\n\nassert twice(double)(3) == 12",
            "import collections\nassert make(collections.OrderedDict) == (True, {'a': 1})",
        ],
        WRAPS,
        WRAPS.replace("f.__doc__,", "f.__name__,").replace("issubclass(factory, dict)", "True"),
    ),
    # list(), tuple(), sorted(), join() take a candidate iterator's items in chunks (drain)
    "drained_iterators_keep_order_ends_and_errors": (
        [
            "try:\n    list(failing(25_000))\nexcept ValueError as e:\n"
            "    assert e.args == ('boom', 25_000)\nelse:\n    raise AssertionError",
            "g = failing(3)\nassert next(g) == 0\ntry:\n    tuple(g)\nexcept ValueError:\n"
            "    pass\nassert list(g) == []",
            "assert sorted(failing(0), reverse=True) == [] and ''.join(map(str, failing(0))) == ''",
            "import io, sys\nold, sys.stdout = sys.stdout, io.StringIO()\n"
            "try:\n    print('start')\n    got = list(noisy(2))\n    seen = sys.stdout.getvalue()\n"
            "finally:\n    sys.stdout = old\n"
            "assert got == [0, 1] and seen == 'start\\ni 0\\ni 1\\n'",
        ],
        DRAINED,
        DRAINED.replace("raise ValueError('boom', n)", "return"),
    ),
    # a test's list, tuple or range iterator crosses as a copy; the test's own one follows it
    "copied_test_iterators": (
        [
            "assert ilen(iter(range(10**6))) == 10**6 and ilen(iter([])) == 0",
            "it = iter([1, 2, 3, 4])\nassert take(2, it) == [1, 2] and next(it) == 3\n"
            "assert take(5, it) == [4] and list(it) == []",
            "it = iter([[1], [2]])\nassert take(1, it) == [[1]] and next(it) == [2]",
            "r = iter(range(5))\nnext(r)\nassert ilen(r) == 4 and list(r) == []",
            "t = iter((1, 2, 3))\nassert ilen(t) == 3 and next(t, 'end') == 'end'",
        ],
        COPIED,
        COPIED.replace("return next(counter)", "return next(counter) - (len(iterable) > 1)"),
    ),
    "module_globals_as_doctests_see_them": (
        ["assert scale(2) == 2 * FACTOR and FACTOR == 3", "assert DEFAULTS['mode'] == 'fast'"],
        "FACTOR = 3\nDEFAULTS = {'mode': 'fast'}\n\ndef scale(x):\n    return x * FACTOR\n",
        "FACTOR = 3\nDEFAULTS = {'mode': 'slow'}\n\ndef scale(x):\n    return x * 2\n",
    ),
    # a mutable global is one object for the test as for the module: kept in step (mirrors)
    "mutable_module_globals_are_one_object": (
        [
            "register('a')\nassert REGISTRY == {'old': 0, 'a': 1}",
            "r = REGISTRY\nregister('b')\nassert r['b'] == 1 and r is REGISTRY",
            "assert defaults() is DEFAULT and DEFAULT is DEFAULT and defaults() == ['x']",
            "assert fresh() is not DEFAULT and fresh() == DEFAULT",
            "__doctest_example__(\"register('c')\")\n"
            "__doctest_example__('REGISTRY', \"{'old': 0, 'a': 1, 'b': 1, 'c': 1}\")",
            "add('b')\nassert TABLE == {'a': [1], 'b': [2]}",
            # the doctest of issue 8: the test's change is made to the candidate's REGISTRY too
            "__doctest_example__('REGISTRY.clear()')\n"
            "__doctest_example__(\"register('a')\")\n"
            "__doctest_example__('REGISTRY', \"{'a': 1}\")",
            "REGISTRY['z'] = 0\nregister('y')\nassert REGISTRY == {'a': 1, 'z': 0, 'y': 1}",
            "d = DEFAULT\nd.append('y')\nassert defaults() == ['x', 'y'] and fresh() == d",
            "assert defaults('z') is DEFAULT and DEFAULT == ['x', 'y', 'z']",
            # what a call changed in the copy it was passed reaches the candidate's global too
            "fill(REGISTRY)\nregister('w')\nassert REGISTRY == {'a': 1, 'z': 0, 'y': 1, 'q': 1,"
            " 'w': 1}",
        ],
        REGISTRY,
        REGISTRY.replace("REGISTRY[name] = 1", "REGISTRY[name.upper()] = 1").replace(
            "return DEFAULT\n", "return list(DEFAULT)\n"
        ),
    ),
}


@pytest.mark.docker
@pytest.mark.parametrize("name", sorted(CASES))
def test_an_honest_candidate_verifies_and_its_wrong_twin_fails(gate: Gate, name: str) -> None:
    tests, honest, wrong = CASES[name]
    spec = Spec.from_tests(tests)
    right, bad = gate.verify([honest, wrong], spec)
    assert right.status is Status.VERIFIED, right
    assert bad.status is Status.FAILED, bad


# Each returns an object that would pass the test if the judge let it decide the comparison.
HOSTILE = {
    "equal_to_everything": "class A:\n    def __eq__(self, o):\n        return True\n"
    "    __hash__ = object.__hash__\n\ndef f(x):\n    return A()\n",
    "yields_equal_to_everything": "class A:\n    def __eq__(self, o):\n        return True\n\n"
    "def f(x):\n    yield A()\n    yield A()\n",
    "truthy_and_forged_text": "class A:\n    def __bool__(self):\n        return True\n"
    "    def __repr__(self):\n        return '[3, 3]'\n    __str__ = __repr__\n"
    "    def __lt__(self, o):\n        return True\n    def __hash__(self):\n        return 3\n"
    "    def __eq__(self, o):\n        return True\n    def __add__(self, o):\n        return 6\n"
    "\ndef f(x):\n    return A()\n",
}
HOSTILE_TESTS = [
    "assert f(3) == [3, 3]",
    "assert list(f(3)) == [3, 3]",
    "assert f(3)",
    "assert repr(f(3)) == '[3, 3]' and str(f(3)) == '[3, 3]'",
    "assert {f(3): 1}[3] == 1",
    "assert sorted([f(3), 1])[0] == 1 or f(3) < 1",
    "assert f(3) + 3 == 6",
    # caught by the test itself: the fault still decides the outcome
    "try:\n    same = f(3) == [3, 3]\nexcept BaseException:\n    same = True\nassert same",
]


@pytest.mark.docker
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_handle_never_decides_equality_truth_hash_order_or_text(gate: Gate, name: str) -> None:
    spec = Spec.from_tests(HOSTILE_TESTS)
    (verdict,) = gate.verify([HOSTILE[name]], spec)
    assert verdict.status is not Status.VERIFIED, verdict
    assert not any(t.passed for t in verdict.tests if "f(3) ==" in t.test), verdict
    # Refused structurally (the fault), not judged by the object nor a TypeError of the judge.
    refused = [t for t in verdict.tests if t.fault is Reason.UNSERIALISABLE]
    assert len(refused) >= 6, verdict


@pytest.mark.docker
@pytest.mark.parametrize(
    "test",
    [
        # a judge class: a silent False would fail an honest candidate
        "assert not isinstance(make(1), list)",
        "import collections.abc\nassert not isinstance(make(1), collections.abc.Iterable)",
        "assert make(1).__class__.__name__ == 'Point'",
        # a callable that is not a plain function crosses without its shape (``signatures``)
        "import functools\nassert copy(functools.partial(max, 1))() == 1",
        # boltons get_all_subclasses: a class the test defines has no faithful stand-in there
        "class A:\n    pass\n\nclass B(A):\n    pass\n\nassert subclasses(A) == ['B']",
    ],
)
def test_type_and_callback_questions_that_cannot_be_judged_are_faults_never_failures(
    gate: Gate, test: str
) -> None:
    code = CLASSES + (
        "\n\nimport types\n\ndef copy(f):\n    return types.FunctionType(f.func.__code__, {})\n\n\n"
        "def subclasses(cls):\n    return [c.__name__ for c in cls.__subclasses__()]\n"
    )
    (verdict,) = gate.verify([code], Spec.from_tests([test]))
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE), verdict


@pytest.mark.docker
@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("def f(x):\n    return helper(x)\n", Reason.MISSING_CONTEXT),
        ("def f(x):\n    return missing_constant\n", Reason.MISSING_CONTEXT),
        ("def f(x):\n    import numpy_not_in_the_image\n    return x\n", Reason.MISSING_DEPENDENCY),
        ("import numpy_not_in_the_image\n\ndef f(x):\n    return x\n", Reason.MISSING_DEPENDENCY),
        ("from .helpers import h\n\ndef f(x):\n    return h(x)\n", Reason.MISSING_CONTEXT),
        ("X = undefined_at_load\n\ndef f(x):\n    return x\n", Reason.MISSING_CONTEXT),
        ("def f(x):\n    from . import sibling\n    return x\n", Reason.MISSING_CONTEXT),
    ],
)
def test_code_without_its_module_is_unverifiable_never_failed(
    gate: Gate, code: str, reason: Reason
) -> None:
    (verdict,) = gate.verify([code], Spec.from_tests(["assert f(3) == 3"]))
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, reason), verdict
    missing = "numpy_not_in_the_image" if reason is Reason.MISSING_DEPENDENCY else ""
    assert missing in verdict.message, verdict  # the message names what is missing


@pytest.mark.docker
def test_doctests_last_shown_value_is_underscore(gate: Gate) -> None:
    """``>>> _`` is the last value an example showed (doctest's display hook), kept in the
    examples' builtins: their own ``_`` still wins, as in a doctest session."""
    test = (
        "__doctest_example__('scale(2)', '6')\n__doctest_example__('_ + 1', '7')\n"
        "__doctest_example__('_', '7')\n__doctest_example__('n = scale(1)')\n"
        "__doctest_example__('_', '7')\n__doctest_example__('_ = 0')\n"
        "__doctest_example__('scale(5)', '15')\n__doctest_example__('_', '0')"
    )
    spec = Spec.build([test], "scale")
    right, wrong = gate.verify(
        ["def scale(x):\n    return 3 * x\n", "def scale(x):\n    return 3 * x + (x == 5)\n"],
        spec,
    )
    assert right.status is Status.VERIFIED, right
    assert wrong.status is Status.FAILED, wrong


@pytest.mark.docker
@pytest.mark.parametrize(
    ("setup", "test"),
    [
        ("from more_itertools_not_here import take", "assert f(3) == 3"),
        ("", "from more_itertools_not_here import take\nassert f(3) == 3"),
    ],
)
def test_the_tests_import_of_a_package_the_judge_lacks_is_missing_context_without_context(
    gate: Gate, setup: str, test: str
) -> None:
    """A doctest's setup imports the snippet's own package; without context nothing can
    supply it (with context it imports from the context, so a missing one is a dependency)."""
    spec = Spec.build([test], "f", setup=setup)
    (verdict,) = gate.verify(["def f(x):\n    return x\n"], spec)
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "more_itertools_not_here" in verdict.message, verdict


@pytest.mark.docker
def test_a_judged_failure_elsewhere_still_makes_the_candidate_failed(gate: Gate) -> None:
    """One test hits a missing helper, the other was judged on real code and failed."""
    code = "def f(x):\n    if x < 0:\n        return helper(x)\n    return x + 1\n"
    (verdict,) = gate.verify([code], Spec.from_tests(["assert f(-1) == 1", "assert f(3) == 3"]))
    assert verdict.status is Status.FAILED, verdict
    assert [t.fault for t in verdict.tests] == [Reason.MISSING_CONTEXT, None], verdict


@pytest.mark.docker
def test_a_name_the_test_binds_is_never_the_candidates(gate: Gate) -> None:
    """The test's own variable, unbound because the call raised, must not resolve to a
    candidate global of that name (a lazy lookup would let it answer for the test)."""
    spec = Spec.from_tests(
        ["try:\n    route = find_route('a')\nexcept KeyError:\n    pass\nassert route is None"]
    )
    code = "route = None\n\ndef find_route(a):\n    raise KeyError(a)\n"
    (verdict,) = gate.verify([code], spec)
    assert verdict.status is Status.FAILED, verdict
    assert verdict.tests[0].outcome == "ERROR:NameError", verdict


@pytest.mark.docker
def test_iterating_a_remote_generator_costs_one_round_trip_per_item() -> None:
    """1,000 items, lazily, well under 20 ms each (a generous bound: the machine is shared;
    measured about 0.1 ms, see the README)."""
    spec = Spec.from_tests(
        [
            "import time\nstart = time.perf_counter()\nassert sum(count_to(1000)) == 499500\n"
            "assert (time.perf_counter() - start) / 1000 < 0.02"
        ]
    )
    code = "def count_to(n):\n    yield from range(n)\n"
    spinning = "def spin(f):\n    while True:\n        f()\n"
    with DockerSandbox(pool_size=1, timeout_s=8.0) as sandbox:
        verdict, endless = sandbox.run(
            [Job(code, spec), Job(spinning, Spec.from_tests(["spin(lambda: None)"]))]
        )
    assert verdict.status is Status.VERIFIED, verdict
    # The deadline holds while the candidate calls back into the judge, endlessly.
    assert (endless.status, endless.reason) == (Status.TIMEOUT, Reason.TIMEOUT), endless


@pytest.mark.docker
def test_a_consumer_that_exhausts_a_remote_iterator_takes_its_items_in_chunks() -> None:
    """``list(h)`` of 300,000 items: one round trip per item (about 0.1 ms each, far more on a
    loaded machine or under gVisor) would pass the 8 s limit; drained in chunks of 10,000 it
    takes well under it. A ``for`` loop stays one at a time (lazy): its 2,000 items still pass."""
    spec = Spec.from_tests(
        [
            "assert len(list(count_to(300_000))) == 300_000",
            "assert list(chunked(range(10**5), 3))[-1] == [99999]",
            "n = 0\nfor x in count_to(2_000):\n    n += 1\nassert n == 2_000",
        ]
    )
    code = CHUNKED + "\n\ndef count_to(n):\n    yield from range(n)\n"
    with DockerSandbox(pool_size=1, timeout_s=8.0) as sandbox:
        (verdict,) = sandbox.run([Job(code, spec)])
    assert verdict.status is Status.VERIFIED, verdict


@pytest.mark.docker
@pytest.mark.parametrize(
    "test",
    [
        # the test takes from its iterator while the candidate's generator holds the copy
        "it = iter((5, 6, 7))\ng = lazy(it)\nassert next(g) == 50 and next(it) == 6\n"
        "assert next(g) == 70",
        "xs = [1, 2, 3]\nit = iter(xs)\ng = lazy(it)\nassert next(g) == 10\nxs[1] = 9\n"
        "assert next(g) == 90",
    ],
)
def test_a_copied_iterator_that_diverges_is_unjudgeable_never_failed(gate: Gate, test: str) -> None:
    (verdict,) = gate.verify([COPIED], Spec.from_tests([test]))
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE), verdict
    assert "changed" in verdict.tests[0].detail, verdict


@pytest.mark.docker
@pytest.mark.parametrize(
    ("tests", "detail"),
    [
        (["TABLE['a'].append(5)\nadd('c')"], "changed its copy of module global TABLE"),
        # a later test would run on a module state in-process code never has: not judged either
        (
            ["TABLE['a'].append(5)", "add('c')\nassert TABLE['a'] == [1, 5]"],
            "an earlier test changed one the other could not follow",
        ),
        # nested items: the test's copy cannot follow the candidate's change exactly
        (["t = TABLE\nadd('b')\nassert t['b'] == [2]"], "module global TABLE"),
        (["t = TABLE\nadd('b')", "assert t['b'] == [2]"], "module global TABLE"),
    ],
)
def test_a_mutable_global_the_copy_cannot_follow_is_unjudgeable_never_failed(
    gate: Gate, tests: list[str], detail: str
) -> None:
    wrong = REGISTRY.replace("REGISTRY[name] = 1", "REGISTRY[name.upper()] = 1")
    spec = Spec.build(tests, "register")
    verdicts = gate.verify([REGISTRY, wrong.replace("[2]", "[3]")], spec)
    for verdict in verdicts:  # the wrong twin too: nothing here could be judged
        assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE)
        assert detail in " ".join(t.detail for t in verdict.tests), verdict
        assert all(t.fault is Reason.UNSERIALISABLE for t in verdict.tests if not t.passed)


@pytest.mark.docker
def test_a_mutable_global_too_large_to_keep_in_step_is_unserialisable(gate: Gate) -> None:
    code = "BIG = list(range(20_000))\n\ndef f():\n    return BIG\n"
    spec = Spec.build(["assert len(BIG) == 20_000", "assert f()[-1] == 19_999"], "f")
    (verdict,) = gate.verify([code], spec)
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE)
    assert all(f"exceed {MAX_KEPT} characters" in t.detail for t in verdict.tests), verdict


@pytest.mark.docker
def test_past_the_handle_cap_a_value_is_unserialisable_never_dropped(gate: Gate) -> None:
    spec = Spec.from_tests(["assert len(objects(100_001)) == 100_001"])
    code = "def objects(n):\n    return [object() for _ in range(n)]\n"
    (verdict,) = gate.verify([code], spec)
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE)
    assert "handles" in verdict.tests[0].detail, verdict


def test_the_codecs_own_types_cross_as_themselves(gate: Gate) -> None:
    """boltons ``get_format_args`` returns ``[(1, int)]``: a returned builtin type crossed as a
    handle, and ``== [(1, int)]`` was False, so a correct function failed. The codec's value
    types are plain data now; anything else a candidate returns stays a handle."""
    spec = Spec.from_tests(
        ["assert kinds('x') == [(0, str), (1, int)]", "assert kinds('x')[0][1] is str"]
    )
    honest = "def kinds(text):\n    return [(0, str), (1, int)]\n"
    right, wrong = gate.verify([honest, honest.replace("int)]", "float)]")], spec)
    assert right.status is Status.VERIFIED, right
    assert wrong.status is Status.FAILED, wrong


def test_a_candidate_descriptor_on_a_tests_class_is_unjudgeable_never_failed(gate: Gate) -> None:
    """boltons ``cachedmethod``: a test decorates its own method with the candidate's
    decorator; in-process the wrapper binds to the test's instance (``__get__``). Its handle
    did not, got the argument as ``self``, and a correct function failed."""
    code = (
        "class _Cached:\n"
        "    def __init__(self, func):\n"
        "        self.func = func\n"
        "    def __get__(self, obj, objtype=None):\n"
        "        return lambda *args: self.func(obj, *args)\n"
        "def cached(func):\n"
        "    return _Cached(func)\n"
    )
    test = (
        "class Lowerer:\n    @cached\n    def lower(self, text):\n        return text.lower()\n"
        "assert Lowerer().lower('WOW') == 'wow'"
    )
    (verdict,) = gate.verify([code], Spec.from_tests([test], entry_point="cached"))
    assert verdict.status is Status.UNVERIFIABLE, verdict
    assert verdict.reason is Reason.UNSERIALISABLE, verdict
