"""AST mutation of canonical functions into verified single-line distractors.

`edits` finds and applies candidate edits of the six bug types (pure AST, no execution);
`select` verifies them in the sandbox and chooses up to four distractors per task.
"""

from guardrail_eval.mutations.edits import BugType, Edit, apply_edit, changed_lines, find_edits
from guardrail_eval.mutations.select import (
    BugTypeStats,
    DropReason,
    Mutant,
    MutationReport,
    mutate_tasks,
)

__all__ = [
    "BugType",
    "BugTypeStats",
    "DropReason",
    "Edit",
    "Mutant",
    "MutationReport",
    "apply_edit",
    "changed_lines",
    "find_edits",
    "mutate_tasks",
]
