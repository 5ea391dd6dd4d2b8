"""The mutation builder: single-line AST edits of six bug types, verified in the real sandbox."""

from __future__ import annotations

import ast
import difflib

import pytest

from guardrail.gate import Gate
from guardrail.verdict import Status
from guardrail_eval.mutations import (
    BugType,
    DropReason,
    MutationReport,
    apply_edit,
    changed_lines,
    find_edits,
    mutate_tasks,
)
from guardrail_eval.pools import TaskSource

# One function with a site of every bug type, and tests under which each type has a mutant that
# passes some tests (the empty and one-element inputs) and fails others.
CLIPPED_DIFFS = '''\
def clipped_diffs(values, limit):
    """Differences of consecutive values, each capped at `limit` (>= 0)."""
    if limit < 0: raise ValueError("negative limit")
    out = []
    for i in range(1, len(values)):
        step = values[i] - values[i - 1]
        if step > limit:
            step = limit
        out.append(step)
    return out
'''
CLIPPED_TESTS = (
    "assert clipped_diffs([], 5) == []",
    "assert clipped_diffs([7], 5) == []",
    "assert clipped_diffs([1, 2, 4], 5) == [1, 2]",
    "assert clipped_diffs([1, 10], 3) == [3]",
    "assert clipped_diffs([5, 3], 3) == [-2]",
    "try:\n    clipped_diffs([1, 2], -1)\nexcept ValueError:\n    pass\n"
    "else:\n    raise AssertionError('expected ValueError')",
)

# The guard is never exercised and `> 100` is never reached: several mutants go unnoticed.
UNTESTED_CLAMP = """\
def clamp(x):
    if x > 100: return 100
    return x
"""


def task(code: str, entry_point: str, tests: tuple[str, ...], task_id: str = "t1") -> TaskSource:
    return TaskSource(
        id=task_id, domain="testing", query="q", entry_point=entry_point, code=code, tests=tests
    )


def diff_lines(before: str, after: str) -> list[str]:
    """Changed lines per difflib, independent of the module's own `changed_lines`."""
    diff = difflib.unified_diff(before.split("\n"), after.split("\n"), lineterm="", n=0)
    return [line for line in diff if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def edited(code: str, entry_point: str = "clipped_diffs") -> dict[BugType, list[str]]:
    """For each bug type, the single changed line pair of every edit, as difflib shows it."""
    result: dict[BugType, list[str]] = {}
    for bug, edits in find_edits(code, entry_point).items():
        result[bug] = [" | ".join(diff_lines(code, apply_edit(code, e))) for e in edits]
    return result


def test_every_edit_is_a_one_line_diff_that_parses() -> None:
    edits = find_edits(CLIPPED_DIFFS, "clipped_diffs")
    assert all(edits[bug] for bug in BugType), {bug: len(e) for bug, e in edits.items()}
    for bug, bug_edits in edits.items():
        for edit in bug_edits:
            mutant = apply_edit(CLIPPED_DIFFS, edit)
            ast.parse(mutant)
            removed = [line for line in diff_lines(CLIPPED_DIFFS, mutant) if line[0] == "-"]
            assert len(removed) == 1, (bug, edit)
            assert changed_lines(CLIPPED_DIFFS, mutant) == 1
            assert removed[0][1:] == CLIPPED_DIFFS.split("\n")[edit.line - 1]


def test_each_bug_type_makes_the_edits_it_promises() -> None:
    shown = edited(CLIPPED_DIFFS)
    assert "+        step = values[i] - values[i]" in " ".join(shown[BugType.OFF_BY_ONE])
    assert "+    for i in range(2, len(values)):" in " ".join(shown[BugType.OFF_BY_ONE_BOUNDARY])
    assert "+        if step >= limit:" in " ".join(shown[BugType.OFF_BY_ONE_BOUNDARY])
    assert "+    for i in range(len(values), 1):" in " ".join(shown[BugType.SWAP_ARGUMENTS])
    assert "+        step = values[i - 1] - values[i]" in " ".join(shown[BugType.SWAP_ARGUMENTS])
    assert shown[BugType.REMOVE_EDGE_CASE_CHECK] == [
        '-    if limit < 0: raise ValueError("negative limit")'
    ]
    assert "+        if step < limit:" in " ".join(shown[BugType.WRONG_COMPARISON])
    assert "+        step = values[i] + values[i - 1]" in " ".join(shown[BugType.WRONG_OPERATOR])


def test_boundary_and_comparison_edits_do_not_overlap() -> None:
    edits = find_edits("def f(a, b):\n    return a < b\n", "f")
    assert [e.replacement for e in edits[BugType.OFF_BY_ONE_BOUNDARY]] == ["<="]
    assert [e.replacement for e in edits[BugType.WRONG_COMPARISON]] == [">", ">="]
    everything = [
        apply_edit("def f(a, b):\n    return a < b\n", e) for es in edits.values() for e in es
    ]
    assert len(everything) == len(set(everything))


def test_multi_line_guard_keeps_its_lines_and_loses_its_condition() -> None:
    code = "def f(xs):\n    if not xs:\n        return 0\n    return xs[0]\n"
    (edit,) = find_edits(code, "f")[BugType.REMOVE_EDGE_CASE_CHECK]
    assert (
        apply_edit(code, edit) == "def f(xs):\n    if False:\n        return 0\n    return xs[0]\n"
    )


def test_a_one_line_guard_alone_in_its_block_is_disabled_not_deleted() -> None:
    code = "def f(xs):\n    for x in xs:\n        if x < 0: raise ValueError(x)\n    return 1\n"
    (edit,) = find_edits(code, "f")[BugType.REMOVE_EDGE_CASE_CHECK]
    mutant = apply_edit(code, edit)
    assert "        if False: raise ValueError(x)" in mutant.split("\n")
    ast.parse(mutant)


def test_only_the_edited_line_changes_byte_for_byte() -> None:
    code = (
        "def f(s, i):  # note: 'é' before the edit site\n"
        "    x = 'é' + s[i]   # keep   this spacing\n"
        "    return x\n"
    )
    (edit, *_) = find_edits(code, "f")[BugType.OFF_BY_ONE]
    mutant = apply_edit(code, edit)
    assert mutant.split("\n")[1] == "    x = 'é' + s[i + 1]   # keep   this spacing"
    assert [a == b for a, b in zip(code.split("\n"), mutant.split("\n"), strict=True)] == [
        True,
        False,
        True,
        True,
    ]


def test_docstrings_annotations_and_helpers_are_never_edited() -> None:
    code = (
        "def helper(n: int = 3) -> int:\n"
        "    return n + 1\n"
        "\n"
        "def f(xs: list[int], k: int = 2) -> dict[str, int]:\n"
        '    """Take 2 < 3 items from xs[0]."""\n'
        "    return {'n': helper(k) * 2}\n"
    )
    lines = {edit.line for edits in find_edits(code, "f").values() for edit in edits}
    assert lines == {6}


@pytest.mark.docker
def test_each_of_the_six_bug_types_yields_a_verified_mutant(gate: Gate) -> None:
    source = task(CLIPPED_DIFFS, "clipped_diffs", CLIPPED_TESTS)
    chosen, report = mutate_tasks([source], gate, seed=0, max_distractors=6)
    mutants = chosen["t1"]
    assert sorted(m.bug_type for m in mutants) == sorted(BugType)
    verdicts = gate.verify([m.code for m in mutants], source.spec)
    for mutant, verdict in zip(mutants, verdicts, strict=True):
        assert len(diff_lines(CLIPPED_DIFFS, mutant.code)) in (1, 2)  # one line: - and/or +
        assert sum(line[0] == "-" for line in diff_lines(CLIPPED_DIFFS, mutant.code)) == 1
        ast.parse(mutant.code)
        assert verdict.status is Status.FAILED
        assert verdict.passed_tests and verdict.failed_tests
        assert tuple(verdict.outcomes) == mutant.outcomes
    assert_report_adds_up(report)
    assert report.kept == 6


@pytest.mark.docker
def test_unnoticed_and_wrecking_mutants_are_dropped_with_reasons(gate: Gate) -> None:
    tests = ("assert clamp(1) == 1", "assert clamp(2) == 2", "assert clamp(50) == 50")
    chosen, report = mutate_tasks([task(UNTESTED_CLAMP, "clamp", tests)], gate, seed=0)
    assert chosen["t1"] == []
    assert report.distractors_per_task == {0: 1}
    dropped = {
        reason: sum(s.dropped.get(reason, 0) for s in report.by_bug_type.values())
        for reason in DropReason
    }
    assert dropped[DropReason.PASSES_ALL] >= 3  # > 101, >= 100, the removed guard, ...
    assert dropped[DropReason.FAILS_ALL] >= 1  # x < 100 returns 100 for every test
    assert report.by_bug_type[BugType.SWAP_ARGUMENTS].no_site == 1
    assert_report_adds_up(report)


@pytest.mark.docker
def test_same_seed_same_mutants_and_the_seed_matters(gate: Gate) -> None:
    source = task(CLIPPED_DIFFS, "clipped_diffs", CLIPPED_TESTS)
    first, first_report = mutate_tasks([source], gate, seed=7)
    again, again_report = mutate_tasks([source], gate, seed=7)
    assert first == again
    assert first_report == again_report
    assert len(first["t1"]) == 4
    assert len({m.bug_type for m in first["t1"]}) == 4  # distinct bug types first
    others = [mutate_tasks([source], gate, seed=seed)[0]["t1"] for seed in range(3)]
    assert any(other != first["t1"] for other in others)


def assert_report_adds_up(report: MutationReport) -> None:
    for bug, stats in report.by_bug_type.items():
        assert stats.candidates == stats.tried + stats.untried, bug
        assert stats.tried == stats.kept + sum(stats.dropped.values()), bug
    report_json = report.model_dump_json()
    assert MutationReport.model_validate_json(report_json) == report
