"""Doctest examples turned into a sequence of tests, run as doctest runs them, and judged for real.

The extraction tests read the test texts; the session tests exec those texts in-process with
`doctest_example` against functions defined here (trusted test code, never a candidate), and check
them against the standard library's own doctest runner (the runner's own tests are in
test_doctesting.py). The Docker tests judge correct functions and mutants in the sandbox.
"""

from __future__ import annotations

import ast
import doctest
import itertools
import shutil
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from guardrail.gate import Gate
from guardrail.index import doctest_tests, split_tree
from guardrail.index.snippet import decode_metadata
from guardrail.sandbox.runner.doctesting import (
    doctest_example,
)
from guardrail.spec import Spec
from guardrail.verdict import Status

CODEBASE = Path(__file__).parent / "snippets" / "codebase"


def _tests(docstring: str, name: str = "f", qualified_name: str | None = None) -> Any:
    return doctest_tests(textwrap.dedent(docstring), name, qualified_name)


def _session(docstring: str, name: str, function: Callable[..., Any], **names: Any) -> list[str]:
    """Run the extracted tests in order in one namespace, as the judge does: one outcome each."""
    found = _tests(docstring, name)
    namespace: dict[str, Any] = {name: function, "__doctest_example__": doctest_example, **names}
    exec(found.setup, namespace)
    outcomes = []
    for test in found.tests:
        try:
            exec(compile(test, "<test>", "exec"), namespace)
            outcomes.append("pass")
        except AssertionError as exc:
            outcomes.append(f"FAIL {exc}")
        except Exception as exc:
            outcomes.append(f"ERROR:{type(exc).__name__}")
    return outcomes


STATEFUL = """
    >>> import itertools
    >>> it = f([1, 2, 3, 4, 5], 2)
    >>> next(it)
    [1, 2]
    >>> x, y = next(it)
    >>> x, y
    (3, 4)
    >>> for chunk in it:
    ...     print(chunk)
    [5]
    >>> list(f(range(30), 10))  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    [[0, 1, 2, ..., 9],  [10, ..., 19],
     [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]]
    >>> list(f([1], 0))
    Traceback (most recent call last):
      ...
    ValueError: n must be positive
    """


def chunks(items: Any, n: int) -> Any:
    if n < 1:
        raise ValueError("n must be positive")
    items = iter(items)
    return iter(lambda: list(itertools.islice(items, n)), [])


def test_examples_become_a_sequence_of_calls_in_order() -> None:
    found = _tests(STATEFUL)
    assert found.setup == "import itertools"
    assert found.tests == [
        "__doctest_example__('it = f([1, 2, 3, 4, 5], 2)')",
        "__doctest_example__('next(it)', '[1, 2]')",
        "__doctest_example__('x, y = next(it)')",
        "__doctest_example__('x, y', '(3, 4)')",
        "__doctest_example__('for chunk in it:\\n    print(chunk)', '[5]')",
        "__doctest_example__('list(f(range(30), 10))  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE',"
        " '[[0, 1, 2, ..., 9],  [10, ..., 19],\\n [20, 21, 22, 23, 24, 25, 26, 27, 28, 29]]',"
        " options='+NORMALIZE_WHITESPACE +ELLIPSIS')",
        "__doctest_example__('list(f([1], 0))', raises='ValueError: n must be positive')",
    ]
    assert found.skipped == 0
    for test in found.tests:
        Spec.build([test], "f", found.setup)  # every test is a valid test on its own


def test_a_session_keeps_its_state_and_a_failing_example_does_not_stop_the_next() -> None:
    assert _session(STATEFUL, "f", chunks) == ["pass"] * 7

    def off_by_one(items: Any, n: int) -> Any:
        return chunks(items, n + 1) if n == 2 else chunks(items, n)

    outcomes = _session(STATEFUL, "f", off_by_one)
    assert outcomes[:3] == ["pass", "FAIL expected '[1, 2]\\n', got '[1, 2, 3]\\n'", "pass"]
    assert outcomes[3].startswith("FAIL expected '(3, 4)\\n', got '(4, 5)")
    assert outcomes[4:] == ["FAIL expected '[5]\\n', got ''", "pass", "pass"]


def test_printed_output_and_displayed_values_are_the_output() -> None:
    def greet(name: str) -> int:
        print(f"hello {name}")
        return len(name)

    docstring = """
        >>> greet('ann')
        hello ann
        3
        >>> n = greet('bo')
        hello bo
        >>> n
        2
        >>> greet('x') and None
        hello x
        """
    assert _session(docstring, "greet", greet) == ["pass"] * 4
    quiet = _session(docstring, "greet", len)  # returns the same values, prints nothing
    assert quiet[0] == "FAIL expected 'hello ann\\n3\\n', got '3\\n'"
    assert quiet[1].startswith("FAIL")


def test_an_unexpected_exception_propagates_and_an_expected_one_is_compared() -> None:
    def parse(text: str) -> int:
        if not text.isdigit():
            raise KeyError(text)
        return int(text)

    docstring = """
        >>> parse('x')
        Traceback (most recent call last):
        KeyError: 'x'
        >>> parse('y')
        Traceback (most recent call last):
        KeyError: 'x'
        >>> parse('z')
        3
        >>> parse('1')
        Traceback (most recent call last):
        KeyError: '1'
        >>> parse('k')  # doctest: +IGNORE_EXCEPTION_DETAIL
        Traceback (most recent call last):
        somewhere.KeyError: another message
        """
    assert _session(docstring, "parse", parse) == [
        "pass",
        "FAIL expected \"KeyError: 'x'\\n\", raised \"KeyError: 'y'\\n\"",
        "ERROR:KeyError",  # doctest fails it too; the judge reports the candidate's exception
        "FAIL expected \"KeyError: '1'\\n\", nothing was raised; got '1\\n'",
        "pass",
    ]


SESSIONS = {
    "total": """
        >>> total([1, 2, 3])
        6
        >>> total([])
        0
        >>> xs = [1.5, 2]
        >>> total(xs) == 3.5
        True
        >>> print(total([10]))
        10
        """,
    "evens": """
        >>> it = evens(10)
        >>> next(it), next(it)
        (0, 2)
        >>> list(it)  # doctest: +ELLIPSIS
        [4, ..., 8]
        >>> list(evens(-1))
        Traceback (most recent call last):
            ...
        ValueError: negative: -1
        """,
}


CANDIDATES: dict[str, list[Callable[..., Any]]] = {
    "total": [sum, lambda xs: sum(xs) + 1, lambda xs: float(sum(xs)), lambda xs: sum(xs[:-1])],
    "evens": [
        lambda n: (
            iter(range(0, n, 2)) if n >= 0 else (_ for _ in ()).throw(ValueError(f"negative: {n}"))
        ),
        lambda n: iter(range(0, n + 1, 2)) if n >= 0 else iter([]),
        lambda n: iter(range(2, n, 2)),
    ],
}


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_the_tests_pass_exactly_when_the_standard_runner_passes(name: str) -> None:
    """Correct functions and mutants: our tests agree with ``doctest.DocTestRunner`` on each."""
    docstring = textwrap.dedent(SESSIONS[name])
    verdicts = []
    for function in CANDIDATES[name]:
        globs = {name: function}
        test = doctest.DocTestParser().get_doctest(docstring, dict(globs), name, None, 0)
        real = doctest.DocTestRunner(optionflags=0).run(test, out=lambda _text: None)
        ours = _session(SESSIONS[name], name, function)
        assert (real.failed == 0) == (ours == ["pass"] * len(ours)), (function, ours)
        verdicts.append(real.failed == 0)
    assert verdicts[0] and not any(verdicts[1:])  # the first is right, every mutant is caught


def test_examples_that_cannot_be_judged_are_skipped_by_reason() -> None:
    found = _tests(
        """
        >>> f(2)  # doctest: +SKIP
        4
        >>> y = f(3)  # doctest: +SKIP
        >>> f(y)
        3
        >>> f.__name__
        'f'
        >>> help(f)
        >>> f(__file__)
        1
        >>> f(-1)
        Traceback (most recent call last):
        SystemExit: 2
        >>> print 1
        1
        >>> f(4)
        16
        """
    )
    assert found.tests == ["__doctest_example__('f(4)', '16')"]
    assert found.reasons == {
        "skip_directive": 2,
        "depends_on_skipped": 1,
        "introspection": 3,
        "not_an_exception": 1,
        "does_not_compile": 1,
    }
    assert found.skipped == 8


def test_output_no_run_can_match_is_not_compared_but_still_runs() -> None:
    found = _tests(
        """
        >>> g = f(); g
        <generator object f at 0x7f3a2c1b9e40>
        >>> sorted(f())
        ['a', 'b']
        >>> set(f())
        {'b', 'a'}
        >>> f  # the judge's reference to f is not f
        <function f at 0x7f3a2c1b9e40>
        """
    )
    assert found.tests == [
        "__doctest_example__('g = f(); g', unchecked='a memory address')",
        "__doctest_example__('sorted(f())', \"['a', 'b']\")",
        "__doctest_example__('set(f())', unchecked='a set of strings, in an order that changes"
        " with every process')",
    ]
    assert found.reasons == {"introspection": 1}


def test_names_from_the_module_are_kept_for_the_judge_to_resolve() -> None:
    found = _tests(">>> list(take(2, f([1, 2, 3])))\n[1, 2]\n")
    assert found.tests == ["__doctest_example__('list(take(2, f([1, 2, 3])))', '[1, 2]')"]


def test_docstrings_that_never_run_the_function_or_set_process_state_give_nothing() -> None:
    never = _tests(
        """
        >>> callable(f)
        True
        >>> isinstance(f, object)
        True
        >>> f(1)  # doctest: +SKIP
        1
        """
    )
    assert (never.tests, never.reasons) == ([], {"skip_directive": 1, "never_calls": 2})
    seeded = _tests(">>> import random\n>>> random.seed(1)\n>>> f(3)\n2\n")
    assert (seeded.tests, seeded.setup) == ([], "")
    assert seeded.reasons == {"process_state": 2, "never_calls": 1}
    environ = _tests(">>> import os\n>>> os.environ['HOME'] = '/x'\n>>> f('~')\n'/x'\n")
    assert (environ.tests, environ.reasons) == ([], {"process_state": 2, "never_calls": 1})
    # more-itertools' is_prime: the examples before the seed do not depend on it.
    prefix = _tests(">>> f(37)\nTrue\n>>> from random import seed\n>>> seed(1)\n>>> f(4)\nFalse\n")
    assert prefix.tests == ["__doctest_example__('f(37)', 'True')"]
    assert prefix.setup == "from random import seed"
    assert prefix.reasons == {"process_state": 2}
    for runs in [
        ">>> list(map(f, [1]))\n[2]\n",
        ">>> @f\n... def g(): pass\n",
        ">>> class C:\n...     x = f(__doc__)\n",  # a class body's own __doc__, not the module's
    ]:
        assert _tests(runs).tests  # passing f to a call or decorating with it runs it


def test_a_method_is_exercised_through_its_class_or_an_instance() -> None:
    docstring = """
        >>> box = Box([3, 1])
        >>> box.smallest()
        1
        """
    found = _tests(docstring, "smallest", "Box.smallest")
    assert found.tests == [
        "__doctest_example__('box = Box([3, 1])')",
        "__doctest_example__('box.smallest()', '1')",
    ]
    assert _tests(docstring, "smallest").tests == []  # a function named smallest: not called


def test_unreadable_docstring_gives_no_tests() -> None:
    assert _tests("   >>> f(1)\n  1\n") == doctest_tests("", "f")


def test_doctest_semantics_accept_true_for_1_but_not_another_text() -> None:
    (test,) = _tests(">>> f(1)\n1\n").tests
    exec(test, {"f": lambda _x: True, "__doctest_example__": doctest_example})  # as doctest
    for wrong in (1.0, "1", [1]):
        with pytest.raises(AssertionError):
            exec(test, {"f": lambda _x, w=wrong: w, "__doctest_example__": doctest_example})
    (strict,) = _tests(">>> f(1)  # doctest: +DONT_ACCEPT_TRUE_FOR_1\n1\n").tests
    with pytest.raises(AssertionError):
        exec(strict, {"f": lambda _x: True, "__doctest_example__": doctest_example})


@pytest.mark.docker
def test_every_extracted_doctest_verifies_its_own_function(gate: Gate) -> None:
    """The tests stored for the sample codebase pass on the code they came from, in the sandbox,
    a ``datetime.date`` a doctest shows included (its own repr, as doctest compares it)."""
    snippets = [s for s in split_tree(CODEBASE).snippets if s.tests]
    specs = [Spec.build(s.tests, s.entry_point, s.setup) for s in snippets]
    metadata = [decode_metadata(s.to_metadata()) for s in snippets]  # each in its module
    verdicts = gate.verify([s.code for s in snippets], specs, metadata=metadata)
    failures = {
        s.qualified_name: (v.status, v.reason)
        for s, v in zip(snippets, verdicts, strict=True)
        if v.status is not Status.VERIFIED
    }
    assert failures == {}
    assert sum(len(v.tests) for v in verdicts) == 29  # Rect.area, judged in its class


SPLIT_WORDS = '''
def split_words(text, width):
    """Split text into words, then group them into lines of at most ``width`` characters.

    >>> lines = split_words("the quick brown fox jumps over the lazy dog", 10)
    >>> it = iter(lines)
    >>> next(it)
    'the quick'
    >>> next(it), next(it)
    ('brown fox', 'jumps over')
    >>> for line in it:
    ...     print(line.upper())
    THE LAZY
    DOG
    >>> split_words("a " * 40, 20)  # doctest: +ELLIPSIS, +NORMALIZE_WHITESPACE
    ['a a a a a a a a a a',
     ...,
     'a a a a a a a a a a']
    >>> split_words("x", 0)
    Traceback (most recent call last):
      ...
    ValueError: width must be positive, not 0
    >>> split_words("", 3)
    []
    """
    if width < 1:
        raise ValueError(f"width must be positive, not {width}")
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    if line:
        lines.append(line)
    return lines
'''


@pytest.mark.docker
def test_a_stateful_doctest_with_directives_verifies_and_its_mutants_fail(gate: Gate) -> None:
    (snippet,) = split_tree_of(SPLIT_WORDS)
    assert len(snippet.tests) == 8
    mutants = [
        SPLIT_WORDS.replace("> width", ">= width"),  # lines one character short
        SPLIT_WORDS.replace("width < 1", "width < 0"),  # no error for 0
        SPLIT_WORDS.replace("raise ValueError", "raise TypeError"),
        SPLIT_WORDS.replace("    if line:\n        lines.append(line)\n", ""),  # drops the last
        SPLIT_WORDS.replace("return lines", "return tuple(lines)"),  # same items, another repr
    ]
    spec = Spec.build(snippet.tests, snippet.entry_point, snippet.setup)
    right, *wrong = gate.verify([SPLIT_WORDS, *mutants], spec)
    assert right.status is Status.VERIFIED, (right.message, right.failed_tests)
    assert len(right.tests) == 8
    assert [v.status for v in wrong] == [Status.FAILED] * len(mutants)
    # The first mutant's failure is example by example: the first line is still right.
    outcomes = [t.outcome for t in wrong[0].tests]
    assert outcomes[:4] == ["pass", "pass", "pass", "FAIL"]


def split_tree_of(source: str) -> list[Any]:
    from guardrail.index import split_python_source

    return [s for s in split_python_source(source, "words.py") if s.tests]


POINT = '''
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __repr__(self):
        return f"Point(x={self.x}, y={self.y})"


def make_point(x, y):
    """A point.

    >>> p = make_point(1, 2)
    >>> p
    Point(x=1, y=2)
    >>> q = p or None
    >>> q.x
    1
    >>> make_point(3, 4).y
    4
    """
    return Point(x, y)
'''


@pytest.mark.docker
def test_examples_after_one_the_judge_could_not_judge_are_unverifiable_not_failed(
    gate: Gate,
) -> None:
    """An object's truth value never decides a test, and what follows it is not judged on a guess;
    its repr, shown by the doctest, is its own text (as doctest compares it)."""
    (snippet,) = split_tree_of(POINT)
    spec = Spec.build(snippet.tests, snippet.entry_point, snippet.setup)
    (verdict,) = gate.verify([POINT], spec)
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, "unserialisable")
    outcomes = [t.outcome for t in verdict.tests]
    assert outcomes == ["pass", "pass", "ERROR:Unserialisable", "ERROR:Unserialisable", "pass"]
    assert verdict.tests[1].shown_by_candidate  # ``>>> p``
    assert "left unknown by an earlier fault" in verdict.tests[3].detail  # q.x: not a guess


def _fidelity_bench() -> Any:
    import importlib.util

    path = Path(__file__).parent.parent / "bench" / "doctest_fidelity.py"
    spec = importlib.util.spec_from_file_location("doctest_fidelity", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.docker
def test_the_fidelity_bench_finds_no_violation_and_would_see_one(
    docker_sandbox: object, tmp_path: Path
) -> None:
    """bench/doctest_fidelity.py on the sample package: the real doctest runner and the stored
    tests agree on every function; a docstring no real run passes is told apart from the rest."""
    from guardrail.sandbox.image import default_image

    bench = _fidelity_bench()
    package = tmp_path / "pocketlib"
    shutil.copytree(CODEBASE / "pocketlib", package)
    wrong = "\n\ndef wrong():\n    '''\n    >>> wrong()\n    2\n    '''\n    return 1\n"
    (package / "arith.py").write_text((package / "arith.py").read_text() + wrong)
    rows = bench.run_in_container(default_image(), package, bench.extract(package))
    line, violations = bench.summarise("pocketlib", rows)
    assert violations == []
    by_name = {row["qualified_name"]: row for row in rows}
    assert by_name["wrong"]["real"] == {"attempted": 1, "failed": 1}
    assert by_name["wrong"]["ours"]["outcomes"] == ["FAIL: expected '2\\n', got '1\\n'"]
    assert "real doctest passes 15; of those 15 have tests, 15 pass all" in line


def test_a_builtin_shown_in_an_output_is_compared_unless_the_module_binds_its_name() -> None:
    """``key=<built-in function neg>`` reads the same in every process, so the example that
    shows it is a test (skipping it left only examples that check nothing: a mutant whose real
    doctest fails came out verified); a builtin name the module binds (its own function, or a C
    version imported in its place) or an unknown module stays skipped."""
    docstring = textwrap.dedent(
        """
        >>> from operator import neg
        >>> skl = SortedKeyList([3, 1, 2], key=neg)
        >>> skl
        SortedKeyList([3, 2, 1], key=<built-in function neg>)
        >>> bisect
        <built-in function bisect>
        >>> str.lower
        <method 'lower' of 'str' objects>
        """
    )
    module = ast.parse("class SortedKeyList:\n    def __init__(self, it, key): pass\n")
    found = doctest_tests(docstring, "__init__", "SortedKeyList.__init__", module)
    assert found.tests[1:] == [
        "__doctest_example__('skl', 'SortedKeyList([3, 2, 1], key=<built-in function neg>)')",
        "__doctest_example__('bisect', '<built-in function bisect>')",
        "__doctest_example__('str.lower', \"<method 'lower' of 'str' objects>\")",
    ]
    assert found.reasons == {}
    shadowing = ast.parse(f"{ast.unparse(module)}\nfrom _bisect import bisect\n")
    kept = doctest_tests(docstring, "__init__", "SortedKeyList.__init__", shadowing)
    assert kept.reasons == {"introspection": 1}
    unknown = doctest_tests(docstring, "__init__", "SortedKeyList.__init__")
    assert unknown.reasons == {"introspection": 3}
