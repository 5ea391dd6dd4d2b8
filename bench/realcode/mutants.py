"""Single-line mutants of indexed functions, in the snippet's text and in place in its real file.

The edits are eval's (`guardrail_eval.mutations.find_edits`, six bug types). A snippet's code is
its function dedented, after the module imports it uses; the edited line is mapped back to its
line in the real file (same text plus the function's indentation), so the same mutant can be
judged by guardrail (snippet text, original metadata: "the index holds mutant text over the
original file") and by the real doctest (the module re-executed with that one line patched).
"""

from __future__ import annotations

from dataclasses import dataclass

from guardrail_eval.mutations import BugType, Edit, apply_edit, find_edits

__all__ = ["PlannedMutant", "plan_mutants"]


@dataclass(frozen=True, slots=True)
class PlannedMutant:
    """One mutant: its snippet text, and the real file's line ``line`` replaced by ``text``."""

    bug_type: BugType
    description: str
    code: str
    line: int
    text: str | None  # None: the line is deleted


def plan_mutants(
    code: str,
    entry_point: str,
    start_line: int,
    end_line: int,
    file_lines: list[str],
    per_function: int,
) -> list[PlannedMutant]:
    """Up to ``per_function`` mutants of ``code``, one bug type after another, in source order.

    ``start_line``/``end_line`` are the function's 1-based lines in the file whose lines are
    ``file_lines``. Edits whose line cannot be mapped to the file (the text differs) are skipped.
    """
    try:
        edits = find_edits(code, entry_point)
    except SyntaxError:
        return []
    lines = code.split("\n")
    # The function's lines are the last ones of the snippet, before the final newline.
    offset = len(lines) - (1 if code.endswith("\n") else 0) - (end_line - start_line + 1)
    first = file_lines[start_line - 1] if 0 < start_line <= len(file_lines) else ""
    indent = first[: len(first) - len(first.lstrip())]
    planned: list[PlannedMutant] = []
    for edit in _round_robin(edits):
        if len(planned) == per_function:
            break
        line = start_line + edit.line - 1 - offset
        if not (start_line <= line <= end_line and line <= len(file_lines)):
            continue
        original = lines[edit.line - 1]
        if file_lines[line - 1] != (indent + original if original else original):
            continue
        mutant = apply_edit(code, edit)
        text = None if edit.deletes_line else indent + mutant.split("\n")[edit.line - 1]
        planned.append(PlannedMutant(edit.bug_type, edit.description, mutant, line, text))
    return planned


def _round_robin(edits: dict[BugType, list[Edit]]) -> list[Edit]:
    """The first edit of each bug type, then the second of each, ...: varied mutants first."""
    ordered: list[Edit] = []
    depth = max((len(found) for found in edits.values()), default=0)
    for n in range(depth):
        ordered += [edits[bug][n] for bug in BugType if n < len(edits.get(bug, []))]
    return ordered
