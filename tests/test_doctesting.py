"""The judge's doctest example runner: doctest's checker mirrored exactly, faults never judged.

Run in-process against the standard library's own `doctest` (the judge cannot afford to import
it; see `guardrail.sandbox.runner.checker`), on test code written here, never a candidate's.
"""

from __future__ import annotations

import doctest
import itertools
import sys
from typing import Any

import pytest

from guardrail.sandbox.runner.checker import _ellipsis_match as ellipsis_match
from guardrail.sandbox.runner.checker import _exception_name as exception_name
from guardrail.sandbox.runner.doctesting import (
    FLAGS,
    Unjudged,
    check_output,
    doctest_example,
)


class Fault(BaseException):
    """Stands for the judge's fault (a value that cannot be judged): never an `Exception`."""


def test_a_fault_is_never_compared_or_caught() -> None:
    class Handle:
        def __repr__(self) -> str:
            raise Fault("unserialisable")

    namespace: dict[str, Any] = {"__doctest_example__": doctest_example, "h": Handle()}
    with pytest.raises(Fault):
        exec("__doctest_example__('h', '<Handle>')", namespace)
    with pytest.raises(Fault):  # not even where an exception is expected
        exec("__doctest_example__('repr(h)', raises='Fault: unserialisable')", namespace)
    # Unchecked output: the example runs (it binds `g`), and no repr is taken at all.
    exec("__doctest_example__('g = h; g', unchecked='a memory address')", namespace)
    assert namespace["g"] is namespace["h"]


def test_what_a_fault_left_unknown_is_not_judged_by_later_examples() -> None:
    def make(*_args: Any) -> Any:
        raise Fault("unserialisable")

    namespace: dict[str, Any] = {"__doctest_example__": doctest_example, "f": make}

    def run(test: str) -> None:
        exec(test, namespace)

    run("__doctest_example__('xs = [1]')")
    for faulting in ("__doctest_example__('it = f()')", "__doctest_example__('f(xs)')"):
        with pytest.raises(Fault):
            run(faulting)
    with pytest.raises(Unjudged, match="it reads it, left unknown"):
        run("__doctest_example__('y = next(it)')")
    with pytest.raises(Unjudged, match="xs"):  # f may have changed it, and nothing came back
        run("__doctest_example__('xs', '[1]')")
    with pytest.raises(Unjudged, match="y"):  # bound by an unjudged example: unknown as well
        run("__doctest_example__('y', '1')")
    run("__doctest_example__('len(f.__name__)', '4')")  # f itself is not the session's
    with pytest.raises(ZeroDivisionError):  # an exception may carry a fault met in a callback
        run("__doctest_example__('z = 1 / 0')")
    with pytest.raises(Unjudged, match="z"):  # its own ERROR already fails a wrong function
        run("__doctest_example__('z', '1')")
    run("__doctest_example__('xs = [2]')")  # bound again: known again
    run("__doctest_example__('xs', '[2]')")


def test_stdout_and_the_display_hook_are_restored_whatever_the_example_did() -> None:
    before = sys.stdout, sys.displayhook
    namespace: dict[str, Any] = {"__doctest_example__": doctest_example}
    for test in ("__doctest_example__('1 / 0')", "__doctest_example__('print(1)', '2')"):
        with pytest.raises((ZeroDivisionError, AssertionError)):
            exec(test, namespace)
        assert (sys.stdout, sys.displayhook) == before


WANTS = [
    "1\n",
    "True\n",
    "0\n",
    "[1, 2,\n 3]\n",
    "[1, 2, 3]\n",
    "a\n<BLANKLINE>\nb\n",
    "a\n\nb\n",
    "a\n   \nb\n",
    "[0, 1, ..., 9]\n",
    "...\n",
    "aa...aa\n",
    "aaa\n",
    "x ... y ... z\n",
    "x   1 y 2 z\n",
    "caf\\xe9\n",
    "café\n",
    "",
]


@pytest.mark.parametrize("flags", [0, *FLAGS.values(), sum(FLAGS.values()), 4 | 8, 1 | 2])
def test_the_checker_decides_as_doctests_own(flags: int) -> None:
    checker = doctest.OutputChecker()
    for want, got in itertools.product(WANTS, repeat=2):
        assert check_output(want, got, flags) == checker.check_output(want, got, flags), (
            want,
            got,
        )


def test_flag_values_and_exception_details_are_doctests() -> None:
    assert {name: doctest.OPTIONFLAGS_BY_NAME[name] for name in FLAGS} == FLAGS
    for message in ["ValueError: x\n", "a.b.MyError: la: di\n", "abc.def", "E\nmore: x", ""]:
        assert exception_name(message) == doctest._strip_exception_details(message)  # type: ignore[attr-defined]
    for want, got in itertools.product(["aa...aa", "a...", "...b", "a...b...c", "ab"], repeat=2):
        assert ellipsis_match(want, got) == doctest._ellipsis_match(want, got)  # type: ignore[attr-defined]
