"""Doctests whose values are not plain data, judged in the real sandbox: generators a candidate
returns, lambdas a test passes, output the candidate prints, its own exception class.

These need the judge's remote handles and callbacks (helper HANDLES): before that lands, a
generator cannot cross and the candidate's printed output never reaches the judge, so on a
branch without it these tests fail (the correct function comes back unverifiable). The lead
enables this file once HANDLES is merged.
"""

from __future__ import annotations

import pytest

from guardrail.gate import Gate
from guardrail.index import split_python_source
from guardrail.spec import Spec
from guardrail.verdict import Status

CHUNKED = '''
class ChunkError(ValueError):
    """A chunk size that is not positive."""


def chunked(iterable, n, report=None):
    """Yield lists of ``n`` items of ``iterable``; the last may be shorter.

    >>> it = chunked([1, 2, 3, 4, 5], 2)
    >>> next(it)
    [1, 2]
    >>> next(it), next(it)
    ([3, 4], [5])
    >>> next(it)
    Traceback (most recent call last):
      ...
    StopIteration
    >>> list(map(sum, chunked(range(6), 3)))
    [3, 12]
    >>> sorted(chunked('abcd', 2), key=lambda chunk: chunk[-1], reverse=True)
    [['c', 'd'], ['a', 'b']]
    >>> for chunk in chunked(range(5), 2, report=print):  # doctest: +NORMALIZE_WHITESPACE
    ...     pass
    chunk 0
    chunk 1
    chunk 2
    >>> list(chunked([1], 0))
    Traceback (most recent call last):
      ...
    words.ChunkError: n must be positive, not 0
    """
    if n < 1:
        raise ChunkError(f"n must be positive, not {n}")
    chunk = []
    count = 0
    for item in iterable:
        chunk.append(item)
        if len(chunk) == n:
            if report is not None:
                report(f"chunk {count}")
            count += 1
            yield chunk
            chunk = []
    if chunk:
        if report is not None:
            report(f"chunk {count}")
        yield chunk
'''


@pytest.mark.docker
def test_a_generator_doctest_verifies_and_its_mutants_fail(gate: Gate) -> None:
    (snippet,) = [s for s in split_python_source(CHUNKED, "words.py") if s.tests]
    assert len(snippet.tests) == 8
    mutants = [
        CHUNKED.replace("    if chunk:\n        if report", "    if False:\n        if report"),
        CHUNKED.replace("if len(chunk) == n:", "if len(chunk) > n:"),
        CHUNKED.replace('report(f"chunk {count}")\n            count', "count"),  # prints less
        CHUNKED.replace("raise ChunkError", "raise TypeError"),
    ]
    spec = Spec.build(snippet.tests, snippet.entry_point, snippet.setup)
    right, *wrong = gate.verify([CHUNKED, *mutants], spec)
    assert right.status is Status.VERIFIED, (right.reason, right.message, right.failed_tests)
    assert [v.status for v in wrong] == [Status.FAILED] * len(mutants)


PRINTS = '''
def show(rows):
    """Print each row's cells separated by bars, and return how many rows there were.

    >>> show([[1, 2], ['a', 'b']])
    1 | 2
    a | b
    2
    >>> n = show([])
    >>> n
    0
    """
    for row in rows:
        print(" | ".join(str(cell) for cell in row))
    return len(rows)
'''


@pytest.mark.docker
def test_what_a_candidate_prints_is_its_doctest_output(gate: Gate) -> None:
    (snippet,) = [s for s in split_python_source(PRINTS, "table.py") if s.tests]
    spec = Spec.build(snippet.tests, snippet.entry_point, snippet.setup)
    right, quiet = gate.verify([PRINTS, PRINTS.replace('print(" | "', 'str(" | "')], spec)
    assert right.status is Status.VERIFIED, (right.reason, right.message, right.failed_tests)
    assert quiet.status is Status.FAILED
    assert quiet.tests[0].outcome == "FAIL"
