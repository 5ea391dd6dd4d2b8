"""One line about a gated candidate for an LLM: its status, what it was judged against, and,
when it could not run for want of its module or a package, where it lives.

The LangChain tool and the LlamaIndex node text both say it in these words, so an agent reading
either is told the same thing: code that passed only its own doctests is labelled so (never as if
it had passed tests written for the query), and a function that exists but could not be run here
comes with the import that reaches it instead of an invitation to write it again.

Names, paths and messages come from the index and from candidates: each is one cleaned, capped
line (`guardrail.safetext.one_line`), so none can break the line or forge a label.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from guardrail.safetext import one_line
from guardrail.sources import SpecSource
from guardrail.verdict import Reason

__all__ = [
    "describe",
    "is_dotted",
    "is_py_path",
    "is_verified",
    "lacks_context",
    "missing_package",
    "where_it_lives",
]

_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*\Z")
# A file as the index stores it: a relative or absolute path to a .py file, in path characters
# only (no spaces, colons or quotes: a planted "file" cannot read as a label).
_PY_PATH = re.compile(r"[\w./-]{1,300}\.py\Z")
# ModuleNotFoundError's own words, or a judge's message quoting the module (as the sandbox's hint).
_NO_MODULE = re.compile(r"(?:No module named|module) '([A-Za-z_]\w*)")
_LACKING = frozenset({Reason.MISSING_CONTEXT.value, Reason.MISSING_DEPENDENCY.value})
_MESSAGE_LIMIT = 300


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
