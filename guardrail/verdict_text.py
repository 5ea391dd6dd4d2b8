"""One line about a gated candidate for an LLM: its status, what it was judged against, and,
when it could not run for want of its module or a package, where it lives.

The LangChain tool and the LlamaIndex node text both say it in these words, so an agent reading
either is told the same thing: code that passed only its own doctests is labelled so (never as if
it had passed tests written for the query), and a function that exists but could not be run here
comes with the import that reaches it instead of an invitation to write it again.

When every candidate that ran failed the tests, `all_failed` says so in a few lines: how many
ran, the first failing test, what each returned (the judge's own repr of a plain value, never a
candidate's text, `guardrail.verdict.TestOutcome.returned`) or raised, and whether they agree,
so that an agent can tell a test that expects the wrong value from code the index lacks. When
candidates passed but were withheld because they disagree on an input (the ``agree`` policy),
`disagreeing` says that instead, with the gate's question; `nothing_handed_over` picks which.

Names, paths and messages come from the index and from candidates: each is one cleaned, capped
line (`guardrail.safetext.one_line`), so none can break the line or forge a label.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pydantic import ValidationError

from guardrail.integration import question_from_metadata
from guardrail.questions import Question
from guardrail.safetext import one_line
from guardrail.sources import SpecSource
from guardrail.verdict import Reason

__all__ = [
    "all_failed",
    "decide",
    "describe",
    "disagreeing",
    "is_dotted",
    "is_py_path",
    "is_verified",
    "lacks_context",
    "location",
    "missing_package",
    "nothing_handed_over",
    "where_it_lives",
]

_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")
# A file as the index stores it: a relative or absolute path to a .py file, in path characters
# only (no spaces, colons or quotes: a planted "file" cannot read as a label).
_PY_PATH = re.compile(r"[\w./-]{1,300}\.py\Z")
# ModuleNotFoundError's own words, or a judge's message quoting the module (as the sandbox's hint).
_NO_MODULE = re.compile(r"(?:No module named|module) '([A-Za-z_]\w*)")
_LACKING = frozenset({Reason.MISSING_CONTEXT.value, Reason.MISSING_DEPENDENCY.value})
Ran = Sequence[tuple[Mapping[str, Any], Mapping[str, Any]]]
"""(verdict dict, metadata) pairs of candidates that ran, in retrieval order."""
_MESSAGE_LIMIT = 300
_TEST_SHOWN = 200  # characters of the failing test shown; of a returned value:
_VALUE_SHOWN = 80
_LINES_SHOWN = 6  # candidates listed one a line; the rest are counted


def is_dotted(value: object) -> bool:
    """Whether ``value`` is a dotted Python name (``pkg.mod``, ``peekable.peek``)."""
    return isinstance(value, str) and _DOTTED.match(value) is not None


def is_py_path(value: object) -> bool:
    """Whether ``value`` looks like the path of a Python file (path characters only)."""
    return isinstance(value, str) and _PY_PATH.match(value) is not None


def is_verified(verdict: Mapping[str, Any]) -> bool:
    """Whether a verdict's metadata says ``verified`` (anything else, or nothing, is not)."""
    return verdict.get("status") == "verified"


def lacks_context(verdict: Mapping[str, Any]) -> bool:
    """Whether the code could not run for want of its module or a package (it was not judged)."""
    return verdict.get("reason") in _LACKING


def where_it_lives(metadata: Mapping[str, Any]) -> str | None:
    """The import that reaches the snippet (``from pkg.mod import chunked``), else its file.

    From the index metadata ``module`` and ``qualified_name`` (a method is reached through its
    class: ``from pkg.mod import peekable`` then ``peekable.peek``); without a ``module``, the
    ``file`` and line range; ``None`` when the metadata tells neither.
    """
    module = metadata.get("module")
    name = metadata.get("qualified_name") or metadata.get("entry_point")
    if is_dotted(module) and isinstance(name, str) and is_dotted(name):
        head = name.split(".", 1)[0]
        through = f", then {name}" if head != name else ""
        return f"from {module} import {head}{through}"
    file = metadata.get("file")
    if not is_py_path(file):
        return None
    start, end = metadata.get("start_line"), metadata.get("end_line")
    lines = f", lines {start}-{end}" if isinstance(start, int) and isinstance(end, int) else ""
    named = f"{name} in " if isinstance(name, str) and name else ""
    return one_line(f"{named}{file}{lines}")


def missing_package(verdict: Mapping[str, Any]) -> str | None:
    """The top-level package a ``missing_dependency`` verdict names (``No module named 'x'``)."""
    texts: list[object] = [verdict.get("message")]
    tests = verdict.get("tests")
    if isinstance(tests, Iterable) and not isinstance(tests, str):
        texts += [test.get("detail") for test in tests if isinstance(test, Mapping)]
    for text in texts:
        found = _NO_MODULE.search(text) if isinstance(text, str) else None
        if found:
            return found.group(1)
    return None


def describe(
    verdict: Mapping[str, Any],
    metadata: Mapping[str, Any],
    *,
    query_tests: str = "the query's tests",
) -> str:
    """One line: ``VERIFIED against ...`` or ``UNVERIFIED (...)``, and where the code lives when
    it could not be run for want of its context.

    Args:
        verdict: the dict stored under ``metadata["guardrail"]`` (`verdict_metadata`).
        metadata: the snippet's metadata (``module``, ``qualified_name``, ``file``, lines).
        query_tests: how to name tests given with the query (the tool says "your tests").
    """
    source = str(verdict.get("spec_source", SpecSource.NONE.value))
    against = _against(source, query_tests)
    if is_verified(verdict):
        passed = len(verdict.get("passed_tests") or [])
        line = f"VERIFIED against {against}: passed {passed}/{passed}"
        if source in (SpecSource.STORED.value, SpecSource.DOCTEST.value):
            line += ", not checked against tests written for this query"
        alias = verdict.get("alias")
        if alias:
            line += f" (its function {one_line(repr(alias))} was called under the tested name)"
        return line
    reason = str(verdict.get("reason", ""))
    if reason == Reason.MISSING_CONTEXT.value:
        line = "UNVERIFIED (missing_context): it could not run outside its module"
    elif reason == Reason.MISSING_DEPENDENCY.value:
        package = missing_package(verdict)
        needs = f"the package {one_line(repr(package))}" if package else "a package"
        line = (
            f"UNVERIFIED (missing_dependency): it needs {needs}, which the sandbox lacks (an"
            " image with it: `guardrail sandbox build --requirements FILE`)"
        )
    elif source == SpecSource.NONE.value:
        return "UNVERIFIED: judged against nothing (no tests were given and none are stored)"
    else:
        status = one_line(str(verdict.get("status", "unverifiable")))
        message = one_line(str(verdict.get("message") or reason or "no test ran"), _MESSAGE_LIMIT)
        return f"UNVERIFIED ({status} against {against}: {message})"
    lives = where_it_lives(metadata)
    if lives:
        line += f"; it lives at `{lives}`: import it from there rather than rewrite it"
    return line


def _against(source: str, query_tests: str) -> str:
    words = {
        SpecSource.QUERY.value: query_tests,
        SpecSource.PROVIDER.value: "the test provider's tests",
        SpecSource.STORED.value: "its own stored tests only",
        SpecSource.DOCTEST.value: "its own doctests only",
    }
    return words.get(source, "nothing")


def location(metadata: Mapping[str, Any]) -> str:
    """``name (file:start-end)`` from the index metadata, each part only when it is a dotted
    name or a path to a .py file (a planted name is no name: it could read as a label)."""
    where = str(metadata.get("qualified_name") or metadata.get("entry_point") or "")
    if not is_dotted(where):
        where = ""
    file = metadata.get("file")
    if is_py_path(file):
        start, end = metadata.get("start_line"), metadata.get("end_line")
        lines = f":{start}-{end}" if isinstance(start, int) and isinstance(end, int) else ""
        where = f"{where} ({file}{lines})" if where else f"{file}{lines}"
    return one_line(where)


def nothing_handed_over(
    quoted: str,
    dropped: Ran,
    *,
    yours: str = "your tests",
    again: str = "call this tool again",
) -> str:
    """What to tell an LLM when the gate handed nothing over although candidates ran:
    ``dropped`` are (verdict dict, metadata) pairs of what it did not hand over
    (`guardrail.integration.GatePlan.dropped`), in retrieval order. Candidates that passed and
    were withheld with a question (the ``agree`` policy) are told by `disagreeing`; otherwise
    `all_failed` tells what the ones that failed returned."""
    passed = [metadata for verdict, metadata in dropped if is_verified(verdict)]
    question = next(filter(None, map(_question_of, passed)), None)
    if question is not None:
        verdicts = [verdict for verdict, _ in dropped if is_verified(verdict)]
        return disagreeing(quoted, verdicts, question, yours=yours, again=again)
    failed = [(verdict, metadata) for verdict, metadata in dropped if not is_verified(verdict)]
    return all_failed(quoted, failed, yours=yours, again=again)


def disagreeing(
    quoted: str,
    passed: Sequence[Mapping[str, Any]],
    question: Question,
    *,
    yours: str = "your tests",
    again: str = "call this tool again",
) -> str:
    """Why nothing was handed over although ``passed`` (verdict dicts) ran and passed: they
    disagree on the ``question``'s input, so at least one is wrong and the tests do not say
    which. Ends with the question and each answer's ready-to-paste test."""
    return (
        f"Nothing is handed over for {quoted}: {_count(len(passed))} ran and passed"
        f" {_tests_of(passed, yours)} but do not agree on an input the gate tried, so at least"
        f" one of them is wrong and the tests do not say which. {decide(yours, again)}\n"
        + question.render()
    )


def decide(yours: str = "your tests", again: str = "call this tool again") -> str:
    """The advice that goes with a question: choose the answer, add its test, ask again."""
    return (
        f"Decide (or ask the user) which answer below is wanted, add its test to {yours} and"
        f" {again}; until then do not rely on any of this code."
    )


def _question_of(metadata: Mapping[str, Any]) -> Question | None:
    try:
        return question_from_metadata(metadata)
    except ValidationError:  # never the gate's own (it validates what it stores): not a question
        return None


def all_failed(
    quoted: str,
    dropped: Ran,
    *,
    yours: str = "your tests",
    again: str = "call this tool again",
) -> str:
    """What to tell an LLM when no candidate passed: ``dropped`` are (verdict dict, metadata)
    pairs of the candidates that ran and failed, errored or timed out, in retrieval order.

    Names the first failing test of the first candidate that failed, then one line per
    candidate (at most a few): what it returned on its first failing test, or raised; and
    whether most agree on one value (then the test may expect the wrong value) or not (then the
    code is probably missing). ``quoted`` is the query, already one safe line.
    """
    failed = [(v, m) for v, m in dropped if v.get("status") == "failed"]
    others = [v for v, _ in dropped if v.get("status") != "failed"]
    why = ", ".join(sorted({_why(v) for v in others}))
    not_run = f" ({len(others)} more could not be judged: {why})" if others else ""
    if not failed:
        return (
            f"Nothing could be verified for {quoted}: {_count(len(others))} could not be"
            f" judged against {_tests_of(others, yours)} ({why}). Do not use that code; write"
            " the function yourself and test it."
        )
    firsts = [_first_failure(verdict) for verdict, _ in failed]
    headline = next((test for test, _ in firsts if test), "")
    lines = [
        f"Nothing could be verified for {quoted}: {_count(len(failed))} ran and"
        f" {'all ' if len(failed) > 1 else ''}failed"
        f" {_tests_of([v for v, _ in failed], yours)}{not_run}. First failing test:"
        f" {one_line(headline, _TEST_SHOWN)}"
    ]
    for number, ((test, got), (_, metadata)) in enumerate(zip(firsts, failed, strict=True), 1):
        if number > _LINES_SHOWN:
            lines.append(f"  ... and {len(failed) - _LINES_SHOWN} more that failed")
            break
        other = f" on another test, {one_line(test, _TEST_SHOWN)}," if test != headline else ""
        where = location(metadata) or "a candidate"
        lines.append(f"  [{number}] {where}{other} {got[1]}")
    lines.append(_agreement([got for test, got in firsts if test == headline], again))
    return "\n".join(lines)


# Why a dropped candidate could not be judged, in words (its reason word otherwise).
_WHY = {
    Reason.MISSING_ENTRY_POINT.value: "no function the tests call",
    Reason.SYNTAX_ERROR.value: "does not parse",
    Reason.LOAD_ERROR.value: "raised while loading",
    Reason.TIMEOUT.value: "ran out of time",
}


def _why(verdict: Mapping[str, Any]) -> str:
    reason = one_line(str(verdict.get("reason", "error")), 40)
    return _WHY.get(reason, reason)


_THEIR_TESTS = {
    SpecSource.PROVIDER.value: "the test provider's tests",
    SpecSource.STORED.value: "their own stored tests",
    SpecSource.DOCTEST.value: "their own doctests",
}


def _tests_of(verdicts: Sequence[Mapping[str, Any]], yours: str) -> str:
    """The tests the verdicts were judged against, in words (``yours`` for the query's)."""
    sources = sorted({str(v.get("spec_source", SpecSource.QUERY.value)) for v in verdicts})
    return " or ".join(_THEIR_TESTS.get(source, yours) for source in sources)


def _count(number: int) -> str:
    return f"{number} candidate" + ("" if number == 1 else "s")


def _first_failure(verdict: Mapping[str, Any]) -> tuple[str, tuple[str, str]]:
    """The first test a failed verdict did not pass, and (agreement key, what the candidate
    did there in words)."""
    tests = verdict.get("tests")
    for test in tests if isinstance(tests, list) else []:
        if not isinstance(test, Mapping) or test.get("outcome") == "pass":
            continue
        text, outcome = str(test.get("test", "")), str(test.get("outcome", ""))
        if outcome.startswith("ERROR:"):
            name = one_line(outcome.removeprefix("ERROR:"), _VALUE_SHOWN)
            return text, (f"raises:{name}", f"raised {name}")
        got = test.get("returned")
        if isinstance(got, Mapping) and got.get("kind") == "value":
            shown = one_line(str(got.get("text", "")), _VALUE_SHOWN)
            return text, (f"value:{got.get('key')}", f"returned {shown}")
        if isinstance(got, Mapping):
            return text, ("", "returned a candidate object (not plain data)")
        return text, ("", "failed it")
    return "", ("", "failed")


def _agreement(gots: Sequence[tuple[str, str]], again: str) -> str:
    """Whether most candidates that failed the first test did the same thing there."""
    if len(gots) == 1:
        return (
            f"It {gots[0][1]} there: if that is the right answer, the test is wrong; fix it and"
            f" {again}. Otherwise write the function yourself and test it."
        )
    counts = Counter(key for key, _ in gots if key)
    key, count = counts.most_common(1)[0] if counts else ("", 0)
    if count >= 2 and count * 2 > len(gots):
        said = next(words for k, words in gots if k == key)
        share = f"All {count}" if count == len(gots) else f"{count} of {len(gots)}"
        return (
            f"{share} {said} on it: if that is the right answer, the test is wrong; fix it and"
            f" {again}. If the test is right, no retrieved code does this: write the function"
            " yourself and test it."
        )
    return (
        "They do not agree on what it should give, so the code you need is probably not in the"
        " index (or the test asks for something unusual): do not use this code; write the"
        " function yourself and test it."
    )
