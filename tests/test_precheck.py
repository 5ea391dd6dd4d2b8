"""The host-side precheck: never raises, linear time, sizes capped before anything parses."""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import Callable

import pytest

from guardrail.gate import Gate
from guardrail.precheck import MAX_CODE_BYTES, MAX_PARSE_BYTES, precheck, precheck_verdict
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

ADD = Spec.from_tests(["assert add(1, 2) == 3", "assert add(-1, 1) == 0"])
GOOD = "def add(a, b):\n    return a + b\n"

# Nesting in code-like text: CPython's parser raises MemoryError, RecursionError or SyntaxError.
# Each is under MAX_PARSE_BYTES, so the host parses it.
NESTING_BOMBS = {
    "unary_minus": "x = " + "-" * 200_000 + "1",
    "nested_not": "x = " + "not " * 50_000 + "1",
    "nested_lambda": "lambda: " * 25_000 + "1",
    "chained_attributes": "x = y" + ".a" * 100_000,
    "chained_calls": "x = f" + "()" * 100_000,
    "minus_5000": "x = " + "-" * 5_000 + "1",
    "parentheses": "x = " + "(" * 100_000,
    "nested_lists": "x = " + "[" * 100_000 + "]" * 100_000,
}


@pytest.mark.parametrize(
    ("code", "reason"),
    [
        ("", Reason.NOT_PYTHON),
        ("Sort the list and return the first element.", Reason.NOT_PYTHON),
        ("If you like, sort it first:\nthen (return it", Reason.NOT_PYTHON),
        ("def f(x):\n    return x +\n", Reason.SYNTAX_ERROR),
        ("    total += x\n  )", Reason.SYNTAX_ERROR),
        ("for x in xs:\n  print(x\n", Reason.SYNTAX_ERROR),
        ("try = 3 +", Reason.SYNTAX_ERROR),
        ("def f(x):\n    return x\n", None),
        ("\x00", Reason.NOT_PYTHON),
        ("x = '\udcff'\n", Reason.NOT_PYTHON),  # a lone surrogate: not UTF-8 source
    ],
)
def test_precheck_reasons(code: str, reason: Reason | None) -> None:
    problem = precheck(code)
    assert (problem[0] if problem else None) == reason


@pytest.mark.parametrize("name", sorted(NESTING_BOMBS))
def test_a_nesting_bomb_is_a_syntax_error_not_an_exception(name: str) -> None:
    verdict = precheck_verdict(NESTING_BOMBS[name])
    assert verdict is not None
    assert (verdict.status, verdict.reason) == (Status.ERROR, Reason.SYNTAX_ERROR)


@pytest.mark.parametrize(
    "code",
    [
        "x" * (MAX_CODE_BYTES + 1),
        "\U0001f600" * (MAX_CODE_BYTES // 4 + 1),  # few characters, many bytes
        "(" * (50 << 20),  # a 50 MB bomb is refused by size, never parsed
    ],
    ids=["ascii", "four_byte_characters", "huge_bomb"],
)
def test_a_candidate_over_the_job_limit_is_too_large_before_parsing(code: str) -> None:
    verdict = precheck_verdict(code)
    assert verdict is not None
    assert (verdict.status, verdict.reason) == (Status.ERROR, Reason.TOO_LARGE)
    assert f"{MAX_CODE_BYTES:,}" in verdict.message


def test_a_candidate_at_the_limit_is_parsed() -> None:
    assert precheck("x = 1\n" + "#" * (MAX_CODE_BYTES - 7) + "\n") is None


def _seconds(check: Callable[[str], object], code: str) -> float:
    best = float("inf")
    for _ in range(3):
        start = time.perf_counter()
        check(code)
        best = min(best, time.perf_counter() - start)
    return best


@pytest.mark.parametrize(
    "make",
    [
        lambda n: "\n" * n + "prose )",  # the quadratic case of a leading \s* under MULTILINE
        lambda n: " " * n + "x",
        lambda n: "  \n" * (n // 3) + "prose )",
        lambda n: "a" * n + " +",
        lambda n: "if " + ": " * (n // 2) + "x (",
    ],
    ids=["newlines", "spaces", "blank_lines", "long_name", "colons"],
)
def test_precheck_takes_linear_time(make: Callable[[int], str]) -> None:
    # A complexity guard, not a benchmark: 30 KB of newlines took 45 s with the old pattern.
    assert _seconds(precheck, make(30_000)) < 2
    assert _seconds(precheck, make(1_000_000)) < 2
    small, large = _seconds(precheck, make(60_000)), _seconds(precheck, make(240_000))
    assert MAX_PARSE_BYTES > 240_000  # both sizes are parsed and pattern-checked on the host
    assert large < 10 * small + 0.05  # quadratic would be 16x


def test_a_big_candidate_is_left_to_the_sandbox_not_parsed_on_the_host() -> None:
    # A 4 MB list literal took 11 s and 2 GB to parse; the sandbox's limits bound it instead.
    code = "x = [" + "1," * (MAX_CODE_BYTES // 2 - 8) + "]\n"
    tracemalloc.start()
    try:
        start = time.perf_counter()
        assert precheck(code) is None
        elapsed = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert elapsed < 2
    assert peak < 64 << 20


@pytest.mark.docker
def test_nesting_bombs_get_verdicts_and_their_neighbours_still_verify(gate: Gate) -> None:
    bombs = [NESTING_BOMBS[name] for name in sorted(NESTING_BOMBS)]
    padding = "#" * MAX_PARSE_BYTES + "\n"  # too big to parse on the host: judged in the sandbox
    big_but_honest = GOOD + "DATA = [" + "1," * (MAX_PARSE_BYTES // 2) + "]\n"
    big_bomb = padding + NESTING_BOMBS["unary_minus"]
    big_syntax_error = GOOD + padding + "def broken(:\n"
    too_large = "(" * (MAX_CODE_BYTES + 1)
    codes = [GOOD, *bombs, big_but_honest, big_bomb, big_syntax_error, too_large, GOOD]
    verdicts = gate.verify(codes, ADD)
    got = [(v.status, v.reason) for v in verdicts]
    verified = (Status.VERIFIED, Reason.PASSED)
    assert got[: len(bombs) + 2] == [
        verified,
        *[(Status.ERROR, Reason.SYNTAX_ERROR)] * len(bombs),
        verified,
    ]
    assert [v.status for v in verdicts[-4:-2]] == [Status.ERROR, Status.ERROR], verdicts[-4:-2]
    assert got[-2:] == [(Status.ERROR, Reason.TOO_LARGE), verified]
