"""The host-side precheck: verdicts a candidate earns before any container starts.

Runs on the host, in the caller's process, on text a retriever returned: it must never raise and
never take more than linear time, whatever the text. So the size is capped before anything else
looks at it, every exception from the parser is the candidate's problem (a verdict, never an
exception out of `Gate.verify`), and the "does this look like code at all" test reads line by line
with a pattern that cannot backtrack across lines.

Parsing costs the host up to ~500 bytes of memory per byte of source (a 4 MB list literal: 2 GB
and 11 s), so only candidates up to `MAX_PARSE_BYTES` are parsed here; a bigger one (up to the
sandbox's `MAX_CODE_BYTES`) goes to the sandbox unparsed, where a syntax error is an ``error``
found inside the container's memory and time limits.

Pathological nesting (``"-" * 200_000 + "1"``, thousands of chained calls) makes CPython's parser
raise ``MemoryError`` or ``RecursionError`` instead of ``SyntaxError``. The compiler in the
container fails on the same text the same way, so such a candidate is an ``error`` with reason
``syntax_error`` ("too deeply nested"), like the ``SyntaxError: too many nested parentheses``
CPython itself gives for brackets.
"""

from __future__ import annotations

import ast
import re

from guardrail.verdict import Reason, Status, Verdict

__all__ = [
    "MAX_CODE_BYTES",
    "MAX_PARSE_BYTES",
    "at_line",
    "capped_size",
    "parse",
    "precheck",
    "precheck_verdict",
    "size_problem",
]

# The DockerSandbox takes at most this many bytes per job (``docker.MAX_JOB_BYTES``); a candidate
# over it could never be sent, so it is refused before it is parsed, hashed or encoded.
MAX_CODE_BYTES = 4 << 20
# Candidates up to this size are parsed on the host (worst case ~130 MB and under a second).
MAX_PARSE_BYTES = 256 << 10

# A line that starts like Python: text that does not parse and has none is prose, not code.
# Matched against one line with its indentation stripped (a leading ``\s*`` under MULTILINE is
# quadratic on a run of blank lines); possessive quantifiers keep each line linear too.
_CODE_START = re.compile(
    r"def |class |import |from \S++ import |@\w|return\b|[\w.\[\]]++\s*+[-+*/]?="
)
_BLOCK_START = re.compile(r"(?:if|for|while|with|try)\b")  # code when the line ends with ":"


def precheck(code: str) -> tuple[Reason, str] | None:
    """``(reason, message)`` when the code cannot run at all, else None. Never raises."""
    size = capped_size(code, MAX_CODE_BYTES)
    if size > MAX_CODE_BYTES:
        return Reason.TOO_LARGE, _too_large(size)
    if not code.strip():
        return Reason.NOT_PYTHON, "the candidate is empty"
    return _parse_problem(code) if size <= MAX_PARSE_BYTES else None


def _parse_problem(code: str) -> tuple[Reason, str] | None:
    try:
        ast.parse(code)
    except SyntaxError as exc:
        if not _looks_like_code(code):
            return Reason.NOT_PYTHON, "the candidate is not Python source (it does not parse)"
        return Reason.SYNTAX_ERROR, f"SyntaxError at line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # e.g. source with NUL bytes
        return Reason.NOT_PYTHON, f"the candidate is not Python source: {exc}"
    except Exception as exc:  # MemoryError, RecursionError: whatever the parser does is ours
        nested = isinstance(exc, MemoryError | RecursionError)
        why = "is too deeply nested for Python to parse" if nested else "cannot be parsed"
        return Reason.SYNTAX_ERROR, f"the candidate {why} ({type(exc).__name__})"
    return None


def size_problem(code: str) -> str | None:
    """Why ``code`` is over `MAX_CODE_BYTES` of UTF-8, or None; big text is never encoded."""
    size = capped_size(code, MAX_CODE_BYTES)
    return _too_large(size) if size > MAX_CODE_BYTES else None


def _too_large(size: int) -> str:
    return (
        f"the candidate takes at least {size:,} bytes; the sandbox takes at most"
        f" {MAX_CODE_BYTES:,} per candidate"
    )


def capped_size(text: str, limit: int) -> int:
    """The UTF-8 size of ``text``, or a lower bound of it over ``limit``, without encoding big text.

    A character takes 1 to 4 bytes, so text with more characters than ``limit`` is over it as it
    is. Lone surrogates (possible in text from JSON) count as the 3 bytes they would take.
    """
    return len(text) if len(text) > limit else len(text.encode("utf-8", "surrogatepass"))


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse`, with every way the parser can fail raised as `SyntaxError`.

    For host-side parsing of text that may be hostile (tests, setup, pool rows): nesting that
    exhausts the parser (``MemoryError``, ``RecursionError``) and NUL bytes (``ValueError``)
    become a ``SyntaxError`` without a line number, so callers need one ``except``.
    """
    try:
        return ast.parse(source, filename=filename)
    except SyntaxError:
        raise
    except (MemoryError, RecursionError) as exc:
        raise SyntaxError(f"too deeply nested to parse ({type(exc).__name__})") from None
    except ValueError as exc:
        raise SyntaxError(str(exc)) from None


def at_line(exc: SyntaxError) -> str:
    """`` (line N)`` for a located syntax error, ``""`` for one from `parse` that has no line."""
    return f" (line {exc.lineno})" if exc.lineno else ""


def precheck_verdict(code: str) -> Verdict | None:
    """`precheck` as a verdict: ``unverifiable`` for text that is not Python, else ``error``."""
    problem = precheck(code)
    if problem is None:
        return None
    reason, message = problem
    status = Status.UNVERIFIABLE if reason is Reason.NOT_PYTHON else Status.ERROR
    return Verdict.unjudged(status, reason, message)


def _looks_like_code(code: str) -> bool:
    for line in code.splitlines():
        stripped = line.lstrip()
        if _CODE_START.match(stripped):
            return True
        if _BLOCK_START.match(stripped) and stripped.rstrip().endswith(":"):
            return True
    return False
