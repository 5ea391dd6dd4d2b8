"""The judge sees what in-process execution would: changes made before a raise, types, exceptions
outside `Exception`, the test's own names, bounded deques; and a candidate cannot crash it.

Each wrong candidate in snippets/judge/ fails these tests when run in-process, and was `verified`
by the sandbox before its fix (found by a red-team pass); each honest twin must still verify.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.gate import Gate
from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

pytestmark = pytest.mark.docker

JUDGE = Path(__file__).parent / "snippets" / "judge"

CASES = {
    "changes_then_raises": (
        [
            "stack = [1, 2, 3]\nassert take(stack, 2) == [3, 2] and stack == [1]",
            "stack = [1, 2]\ntry:\n    take(stack, 5)\nexcept IndexError:\n    pass\n"
            "assert stack == [1, 2], 'a failed take must leave the stack alone'",
        ],
        "def take(stack, n):\n    if n > len(stack):\n        raise IndexError(n)\n"
        "    return [stack.pop() for _ in range(n)]\n",
    ),
    "ints_to_bools_in_place": (
        [
            "xs = [1, 0, 1]\nassert normalise(xs) is None\n"
            "assert xs == [1, 0, 1] and all(type(v) is int for v in xs)"
        ],
        "def normalise(xs):\n    xs[:] = [int(v) for v in xs]\n",
    ),
    "exits_instead_of_raising": (
        [
            "try:\n    parse_age('abc')\nexcept Exception:\n    pass\nelse:\n"
            "    raise AssertionError('no error for bad input')",
            "assert parse_age('42') == 42",
        ],
        "def parse_age(text):\n    if not text.isdigit():\n        raise ValueError(text)\n"
        "    return int(text)\n",
    ),
    "function_named_like_a_test_variable": (
        [
            "try:\n    route = find_route('a', 'b')\nexcept KeyError:\n    pass\n"
            "assert route is not None"
        ],
        "def find_route(start, goal):\n    return [start, goal]\n",
    ),
    "match_captures_are_the_tests_own_names": (
        [
            "match parse_point('3,4'):\n    case (x, y):\n        pass\n    case _:\n"
            "        pass\nassert (x, y) == (3, 4)"
        ],
        "def parse_point(text):\n    return tuple(int(part) for part in text.split(','))\n",
    ),
    "stop_answers_a_global_lookup": (
        ["assert volume(2) == 8", "assert all(map(lambda x: cube(x) == x ** 3, range(1, 4)))"],
        "def volume(side):\n    return side ** 3\n\n\ndef cube(x):\n    return x ** 3\n",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_wrong_candidate_fails_and_its_honest_twin_verifies(gate: Gate, name: str) -> None:
    tests, honest = CASES[name]
    spec = Spec.from_tests(tests)
    wrong, right = gate.verify([(JUDGE / f"{name}.py").read_text(), honest], spec)
    assert wrong.status is Status.FAILED, wrong
    assert right.status is Status.VERIFIED, right


def test_a_bounded_deque_keeps_its_bound_across_the_boundary(gate: Gate) -> None:
    spec = Spec.from_tests(
        [
            "from collections import deque\nd = deque([1, 2, 3], maxlen=3)\npush_front(d, 0)\n"
            "assert list(d) == [0, 1, 2] and d.maxlen == 3"
        ]
    )
    (verdict,) = gate.verify(["def push_front(d, x):\n    d.appendleft(x)\n"], spec)
    assert verdict.status is Status.VERIFIED, verdict


SQUARE = Spec.from_tests(["assert square(3) == 9", "assert square(-2) == 4"])
GOOD = "def square(x):\n    return x * x\n"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("greeting_nested_to_crash_the_judge", (Status.ERROR, Reason.PROTOCOL_VIOLATION)),
        ("main_thread_exits_first", (Status.FAILED, Reason.TESTS_FAILED)),
    ],
)
def test_a_candidate_cannot_crash_the_judge_or_outlive_its_cleanup(
    name: str, expected: tuple[Status, Reason]
) -> None:
    """Before: a greeting nested 100,000 deep crashed the judge (`sandbox_fault` on demand, which
    the eval would then count as the machine's fault), and a process whose main thread exited
    first hid from the cleanup and cost three containers."""
    with DockerSandbox(pool_size=1, timeout_s=3.0) as sandbox:
        attack, after = sandbox.run(
            [Job((JUDGE / f"{name}.py").read_text(), SQUARE), Job(GOOD, SQUARE)]
        )
        assert (attack.status, attack.reason) == expected, attack
        assert after.status is Status.VERIFIED, after
        assert sandbox.stats.faults == 0 and sandbox.stats.containers_started == 1


IDENTITY = {
    "aliased_rows_and_returned_argument": (
        [
            "g = make_grid(2, 3)\ng[0][0] = 1\nassert g == [[1, 0, 0], [0, 0, 0]]",
            "a = [1, 2, 3]\nb = copy_list(a)\nb.append(4)\n"
            "assert a == [1, 2, 3] and b == [1, 2, 3, 4] and b is not a",
        ],
        "def make_grid(rows, cols):\n    return [[0] * cols for _ in range(rows)]\n\n\n"
        "def copy_list(xs):\n    return list(xs)\n",
    ),
    "keeps_a_reference_to_its_argument": (
        [
            "data = [1, 2]\nremember(data)\nremember_more(3)\nassert recall() == [1, 2, 3]\n"
            "assert data == [1, 2], 'remember must keep its own copy'"
        ],
        "_memory = []\n\n\ndef remember(items):\n    global _memory\n    _memory = list(items)\n"
        "\n\ndef remember_more(item):\n    _memory.append(item)\n\n\n"
        "def recall():\n    return list(_memory)\n",
    ),
}


@pytest.mark.parametrize("name", sorted(IDENTITY))
def test_identity_a_copy_would_hide_is_never_verified(gate: Gate, name: str) -> None:
    """Values cross as copies: sharing inside a result, a result that is an argument, and an
    argument the candidate keeps must not let wrong code pass (before: all three `verified`)."""
    tests, honest = IDENTITY[name]
    spec = Spec.from_tests(tests)
    wrong, right = gate.verify([(JUDGE / f"{name}.py").read_text(), honest], spec)
    # Failed where the test could see the truth (the returned argument is the test's own list),
    # unjudgeable where a copy cannot show it; never verified.
    assert wrong.status in {Status.FAILED, Status.UNVERIFIABLE}, wrong
    assert any(t.fault is Reason.UNSERIALISABLE for t in wrong.tests), wrong
    assert right.status is Status.VERIFIED, right


def test_parts_of_arguments_in_a_result_are_honest_values(gate: Gate) -> None:
    """Returning the records one was given (grouped, indexed, filtered) is ordinary code."""
    spec = Spec.from_tests(
        [
            "rows = [{'k': 1}, {'k': 2}, {'k': 1}]\n"
            "assert index_by(rows, 'k') == {1: [{'k': 1}, {'k': 1}], 2: [{'k': 2}]}"
        ]
    )
    code = (
        "def index_by(records, field):\n    index = {}\n    for record in records:\n"
        "        index.setdefault(record[field], []).append(record)\n    return index\n"
    )
    (verdict,) = gate.verify([code], spec)
    assert verdict.status is Status.VERIFIED, verdict


def test_an_argument_returned_as_itself_is_the_tests_own_object(gate: Gate) -> None:
    spec = Spec.from_tests(
        [
            "xs = [3, 1, 2]\nassert sort_in_place(xs) is xs and xs == [1, 2, 3]",
            "big = list(range(200_000, 0, -1))\nassert sort_in_place(big)[:2] == [1, 2]",
            "pairs = [(i, i) for i in range(50_000)]\nassert len(sort_in_place(pairs)) == 50_000",
        ]
    )
    (verdict,) = gate.verify(["def sort_in_place(xs):\n    xs.sort()\n    return xs\n"], spec)
    assert verdict.status is Status.VERIFIED, verdict


def test_a_stop_ends_only_an_iteration(gate: Gate) -> None:
    """An attribute that raises StopIteration would end the test's ``map()`` early (``all`` of
    nothing is True): as for a call, it is the candidate's exception, never the end of the
    test's iteration (before: `verified`)."""
    spec = Spec.from_tests(["assert all(map(lambda item: item.ok, items(2)))"])
    wrong = (
        "class Item:\n    @property\n    def ok(self):\n        raise StopIteration\n\n\n"
        "def items(n):\n    return [Item() for _ in range(n)]\n"
    )
    honest = wrong.replace("raise StopIteration", "return True")
    bad, right = gate.verify([wrong, honest], spec)
    assert bad.status is Status.FAILED, bad
    assert bad.tests[0].outcome == "ERROR:StopIteration", bad
    assert right.status is Status.VERIFIED, right


def test_a_fault_in_the_setup_keeps_its_own_verdict(gate: Gate) -> None:
    """The setup reaches the candidate when it calls it, reads its globals or imports its
    package: what the judge found there (a missing helper, a candidate that exited) is that
    fault's verdict, never ``setup_error``, which says the spec is broken (before: it was)."""
    spec = Spec.from_tests(["assert BASE == 2 and f(3) == 5"], setup="BASE = f(0)")
    lacks_helper = "def f(x):\n    return helper(x) + 2\n"
    exits = "import os\n\n\ndef f(x):\n    os._exit(3)\n"
    missing, exited, right = gate.verify(
        [lacks_helper, exits, "def f(x):\n    return x + 2\n"], spec
    )
    assert (missing.status, missing.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "helper" in missing.message, missing
    assert (exited.status, exited.reason) == (Status.ERROR, Reason.CANDIDATE_EXITED), exited
    assert right.status is Status.VERIFIED, right


def test_values_too_large_to_cross_are_unserialisable_never_the_candidates_error(
    gate: Gate,
) -> None:
    """Over the channel's 16 MiB frame limit: the test's argument made the candidate exit on a
    frame it refused (``candidate_exited``), the candidate's result was a ``protocol_violation``,
    and each ended every later test. Now both are values that cannot cross; the rest is judged."""
    spec = Spec.from_tests(
        [
            "assert count('x' * 17_000_000) == 17_000_000",
            "assert len(text(17_000_000)) == 17_000_000",
            "assert count('ab') == 2 and text(2) == 'xx'",
        ]
    )
    honest = "def count(s):\n    return len(s)\n\n\ndef text(n):\n    return 'x' * n\n"
    (verdict,) = gate.verify([honest], spec)
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE)
    assert [t.fault for t in verdict.tests] == [Reason.UNSERIALISABLE] * 2 + [None], verdict


def test_a_doctest_expecting_system_exit_compares_it_as_doctest_does(gate: Gate) -> None:
    """doctest compares every exception but KeyboardInterrupt: argparse-style code whose example
    expects ``SystemExit: 2`` passes in-process. Before: ``ERROR:SystemExit``, failed."""
    spec = Spec.from_tests(
        [
            "__doctest_example__('parse([])', raises='SystemExit: 2')",
            "__doctest_example__('parse([1])', '[1]')",
        ],
        entry_point="parse",
    )
    honest = "def parse(args):\n    if not args:\n        raise SystemExit(2)\n    return args\n"
    right, wrong = gate.verify([honest, honest.replace("SystemExit(2)", "SystemExit(1)")], spec)
    assert right.status is Status.VERIFIED, right
    assert wrong.status is Status.FAILED, wrong
    assert wrong.tests[0].outcome == "FAIL", wrong


def test_the_doctest_runner_is_never_the_candidates(gate: Gate) -> None:
    """Tests made only of doctest calls infer ``__doctest_example__`` as their entry point; bound,
    it was the candidate's: a wrong one defining it (or any lone function, as an alias) ran and
    passed every example (before: `verified`). The judge's own names are never bound."""
    spec = Spec.from_tests(
        ["__doctest_example__('parse([1])', '[1]')", "__doctest_example__('parse([])', '[]')"]
    )
    wrong = (
        "def __doctest_example__(*args, **kwargs):\n    pass\n\n\ndef parse(xs):\n    return 0\n"
    )
    bad, right = gate.verify([wrong, "def parse(xs):\n    return list(xs)\n"], spec)
    assert bad.status is Status.FAILED, bad
    assert right.status is Status.VERIFIED, right


def test_a_name_error_the_code_raises_itself_is_its_answer(gate: Gate) -> None:
    """Only the interpreter's NameError (it names the missing name) says the code lacks its
    module; a function that raises NameError on purpose is judged (before: missing_context)."""
    spec = Spec.from_tests(
        [
            "try:\n    option('x')\nexcept NameError as e:\n    assert 'no such option' in str(e)\n"
            "else:\n    raise AssertionError('no error for an unknown option')"
        ]
    )
    honest = "def option(name):\n    raise NameError(f'no such option: {name}')\n"
    right, wrong = gate.verify([honest, "def option(name):\n    return None\n"], spec)
    assert right.status is Status.VERIFIED, right
    assert wrong.status is Status.FAILED, wrong


def test_printed_output_past_the_cap_is_never_compared(gate: Gate) -> None:
    """The candidate keeps 64,000 characters of what one call prints; a doctest comparing more
    compared a truncated text: FAIL, for honest code (before). It cannot be judged; a test that
    does not capture the output still passes."""
    rows = "".join(f"row {i}\n" for i in range(8000))
    spec = Spec.from_tests(
        [f"__doctest_example__('table(8000)', {rows!r})", "assert table(8000) is None"],
        entry_point="table",
    )
    honest = "def table(n):\n    for i in range(n):\n        print('row', i)\n"
    (verdict,) = gate.verify([honest], spec)
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.UNSERIALISABLE)
    assert [t.fault for t in verdict.tests] == [Reason.UNSERIALISABLE, None], verdict


def test_a_tests_own_exception_raised_through_the_candidate_is_the_tests_own(gate: Gate) -> None:
    """A test's callback raises the test's own exception class and the candidate lets it
    propagate, as ``map`` or ``sorted(key=...)`` would: in-process ``except Stop`` catches it.
    It came back as a stand-in named Stop that nothing catches: ERROR, failed (before)."""
    spec = Spec.from_tests(
        [
            "class Stop(Exception):\n    pass\n\n\ndef boom(x):\n    raise Stop(x)\n\n\n"
            "try:\n    apply(boom, 1)\nexcept Stop as e:\n    assert e.args == (1,)\n"
            "else:\n    raise AssertionError('no Stop')"
        ]
    )
    honest = "def apply(f, x):\n    return f(x)\n"
    right, wrong = gate.verify([honest, "def apply(f, x):\n    return x\n"], spec)
    assert right.status is Status.VERIFIED, right
    assert wrong.status is Status.FAILED, wrong


ARGUMENT_PARTS = Path(__file__).parent / "snippets" / "argument_parts"
# In-process these hold for the honest functions and fail for their deep-copying twins.
PARTS_TESTS = [
    "x = {'a': 1, 'c': [1, 2]}\ny = clone(x)\nassert y == x and y is not x and y['c'] is x['c']",
    "rows = [[1], [2]]\nassert clone(rows)[1] is rows[1]",
    "t = (1, [2])\nassert same(t) is t",
    "nested = [(1, 2), (3, 4)]\nassert same(nested[1]) is nested[1]",
    "rows = [{'k': 1}, {'k': 2}, {'k': 1}]\nindex = index_by(rows, 'k')\n"
    "assert index == {1: [{'k': 1}, {'k': 1}], 2: [{'k': 2}]}\n"
    "assert index[1][1] is rows[2] and index[2][0] is rows[1]",
    "d = {'c': [1], 'e': {'f': (1,)}}\nassert pick(d, key='e') is d['e']",
    # The same list passed twice: both copies are the test's one list.
    "xs = [1]\nassert same([xs, xs])[1] is xs",
    # Any argument returned as itself: a str or an int is no copy either.
    "s = 'x' * 100\nassert same(s) is s",
    "big = 10 ** 30\nassert same(big) is big",
]


def test_parts_of_the_arguments_in_a_result_are_the_tests_own_objects(
    sandbox_runtime: str,
) -> None:
    """pydash ``clone(x)["c"] is x["c"]``, ``f(t) is t`` for a tuple: the parts crossed as
    copies, so correct shallow code failed. Each test runs on its own, so one outcome cannot
    hide another; the deep-copying twin fails every one."""
    honest = (ARGUMENT_PARTS / "shallow_clone.py").read_text()
    wrong = (ARGUMENT_PARTS / "shallow_clone_wrong.py").read_text()
    specs = [Spec.from_tests([test]) for test in PARTS_TESTS]
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        right = sandbox.run([Job(honest, spec) for spec in specs])
        copied = sandbox.run([Job(wrong, spec) for spec in specs])
    for test, verdict in zip(PARTS_TESTS, right, strict=True):
        assert (verdict.status, verdict.reason) == (Status.VERIFIED, Reason.PASSED), (test, verdict)
    for test, verdict in zip(PARTS_TESTS, copied, strict=True):
        assert (verdict.status, verdict.reason) == (Status.FAILED, Reason.TESTS_FAILED), (
            test,
            verdict,
        )
