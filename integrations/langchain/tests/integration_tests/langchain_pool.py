"""Test pools of the LangChain integration's tests.

The near-clone pool: for each task a correct function and single-line buggy clones of it, the
shape of ExecRetrieval's distractors. With the MiniLM embedding an ungated search ranks a buggy
clone first for both queries below (the tests assert that precondition before relying on it).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

from guardrail.index import Snippet


@dataclass(frozen=True)
class Task:
    query: str
    entry_point: str
    canonical: str
    clones: dict[str, str]  # name -> code, each one line different from the canonical
    tests: tuple[str, ...]


def _clone(code: str, old: str, new: str) -> str:
    assert code.count(old) == 1, old
    return code.replace(old, new)


_LEAP = '''def is_leap_year(year):
    """Return True if year is a leap year in the Gregorian calendar."""
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
'''

_CHUNK = '''def chunk(items, size):
    """Split items into consecutive lists of at most size elements."""
    return [items[i:i + size] for i in range(0, len(items), size)]
'''

LEAP = Task(
    query="check whether a year is a leap year",
    entry_point="is_leap_year",
    canonical=_LEAP,
    clones={
        "is_leap_year_wrong_operator": _clone(_LEAP, "!= 0 or", "!= 0 and"),
        "is_leap_year_wrong_comparison": _clone(_LEAP, "% 400 == 0", "% 400 != 0"),
        "is_leap_year_off_by_one": _clone(_LEAP, "% 4 == 0", "% 4 == 1"),
    },
    tests=(
        "assert is_leap_year(2024)",
        "assert not is_leap_year(1900)",
        "assert is_leap_year(2000)",
        "assert not is_leap_year(2023)",
    ),
)

CHUNK = Task(
    query="split a list into chunks of a given size",
    entry_point="chunk",
    canonical=_CHUNK,
    clones={
        "chunk_off_by_one": _clone(_CHUNK, "range(0,", "range(1,"),
        "chunk_off_by_one_boundary": _clone(_CHUNK, "items[i:i + size]", "items[i:i + size - 1]"),
    },
    tests=(
        "assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]",
        "assert chunk([], 3) == []",
        "assert chunk([1, 2, 3], 3) == [[1, 2, 3]]",
    ),
)

NEAR_CLONE_TASKS = (LEAP, CHUNK)

# Correct functions with their own tests stored in the index (the standard tests' pool).
UTILITIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "clamp": (
        "def clamp(value, low, high):\n"
        '    """Limit a number to the closed range [low, high]."""\n'
        "    return max(low, min(value, high))\n",
        (
            "assert clamp(5, 0, 10) == 5",
            "assert clamp(-3, 0, 10) == 0",
            "assert clamp(42, 0, 10) == 10",
        ),
    ),
    "is_leap_year": (_LEAP, LEAP.tests),
    "chunk": (_CHUNK, CHUNK.tests),
    "word_count": (
        "def word_count(text):\n"
        '    """Count the whitespace-separated words in a text."""\n'
        "    return len(text.split())\n",
        ("assert word_count('a b  c') == 3", "assert word_count('') == 0"),
    ),
    "mean": (
        "def mean(values):\n"
        '    """Arithmetic mean of a non-empty list of numbers."""\n'
        "    return sum(values) / len(values)\n",
        ("assert mean([1, 2, 3]) == 2", "assert mean([5]) == 5"),
    ),
}


def snippet(code: str, name: str, *, tests: tuple[str, ...] = (), file: str = "") -> Snippet:
    lines = code.count("\n")
    return Snippet(
        code=code,
        entry_point=code.split("(", 1)[0].removeprefix("def "),
        qualified_name=name,
        file=file or f"src/{name}.py",
        start_line=1,
        end_line=lines,
        tests=list(tests),
    )


def near_clone_snippets() -> list[Snippet]:
    """Every task's canonical and clones, without stored tests (the query brings them)."""
    snippets = []
    for task in NEAR_CLONE_TASKS:
        snippets.append(snippet(task.canonical, task.entry_point))
        snippets.extend(snippet(code, name) for name, code in task.clones.items())
    return snippets


def utility_snippets() -> list[Snippet]:
    return [snippet(code, name, tests=tests) for name, (code, tests) in UTILITIES.items()]


def unique_name(prefix: str) -> str:
    """All ephemeral Chroma clients of a process share one database: never reuse a name."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"
