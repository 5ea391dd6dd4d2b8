"""From candidate edits to verified distractors: shuffle, de-duplicate, verify, choose.

See `mutate_tasks` for the contract and `DropReason` for the words of the report.
"""

from __future__ import annotations

import ast
import random
from collections.abc import Callable, Sequence
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field

from guardrail.gate import Gate
from guardrail.verdict import Reason, Status, Verdict
from guardrail_eval.faults import fault_reason
from guardrail_eval.mutations.edits import BugType, Edit, apply_edit, find_edits
from guardrail_eval.pools import TaskSource

__all__ = ["BugTypeStats", "DropReason", "Mutant", "MutationReport", "mutate_tasks"]


class DropReason(StrEnum):
    """Why a tried edit did not become a distractor."""

    PARSE_ERROR = "parse_error"  # the edited code does not parse
    DUPLICATE = "duplicate"  # same AST as the canonical or as an earlier mutant of the task
    PASSES_ALL = "passes_all"  # no test notices: equivalent, or the tests do not cover it
    FAILS_ALL = "fails_all"  # a wreck, not a near-clone: fails every test
    TIMEOUT = "timeout"  # needs more CPU than the limit (kept out: it would slow every gated run)
    FAULT = "fault"  # still a sandbox fault or a starved timeout after the retries: undecided
    ERROR = "error"  # the sandbox judged it `error` (crashed, could not load)
    UNVERIFIABLE = "unverifiable"  # the sandbox could not decide
    OVER_QUOTA = "over_quota"  # valid, but the task had enough distractors without it


class Mutant(BaseModel):
    """A verified distractor: the canonical with one edit; passes >= 1 test and fails >= 1."""

    model_config = ConfigDict(frozen=True)

    code: str
    bug_type: BugType
    description: str
    outcomes: tuple[str, ...] = Field(description="per-test outcome words from the sandbox")


class BugTypeStats(BaseModel):
    """What happened to the candidate edits of one bug type, over all tasks.

    ``candidates = tried + untried`` and ``tried = kept + sum(dropped.values())``. ``untried``
    edits were never needed (their task had its distractors first); ``no_site`` counts tasks
    without any edit of this type (tasks, not edits).
    """

    candidates: int = 0
    tried: int = 0
    kept: int = 0
    dropped: dict[DropReason, int] = Field(default_factory=dict)
    untried: int = 0
    no_site: int = 0

    def drop(self, reason: DropReason) -> None:
        self.dropped[reason] = self.dropped.get(reason, 0) + 1


class MutationReport(BaseModel):
    """Per bug type: candidate edits tried, kept, and why the others were dropped."""

    seed: int
    max_distractors: int
    tasks: int = 0
    sandbox_runs: int = 0
    distractors_per_task: dict[int, int] = Field(
        default_factory=dict, description="histogram: number of distractors -> number of tasks"
    )
    by_bug_type: dict[BugType, BugTypeStats] = Field(
        default_factory=lambda: {bug: BugTypeStats() for bug in BugType}
    )

    @property
    def kept(self) -> int:
        return sum(stats.kept for stats in self.by_bug_type.values())


def mutate_tasks(
    tasks: Sequence[TaskSource],
    gate: Gate,
    *,
    seed: int,
    max_distractors: int = 4,
    on_task: Callable[[int, int], None] | None = None,
) -> tuple[dict[str, list[Mutant]], MutationReport]:
    """Verified distractors for every task (by task id), and the report of how they were chosen.

    Per task, the candidate edits of each bug type (`find_edits`) are shuffled by
    ``random.Random(f"{seed}:{task.id}")`` and tried in rounds; each round is ONE
    ``gate.verify`` call against the task's tests. A round tries the next 1, 2, 4, ... edits of
    every bug type that has no valid mutant yet (of every bug type once the distinct types are
    exhausted and the task still has fewer than ``max_distractors``); rounds stop when the task
    has ``max_distractors`` valid mutants of distinct types, or can get no more distinct types
    and has enough, or runs out of edits. Trying edits lazily keeps sandbox runs (and mutants
    that loop until the timeout) to a fraction of an exhaustive run.

    Mutants are judged with the task's ``metadata`` (its module context, when it has one).
    A task with a single test gets no distractor (none can pass one test and fail another) and
    its edits are left untried. An edit is dropped when it does not parse or repeats an AST
    already seen; a verified mutant is valid when its verdict is ``failed`` with at least one
    passing test and no timeout. Only a busy timeout drops a mutant as ``timeout``: ``gate``'s
    sandbox is expected to re-run starved ones (`guardrail_eval.faults`), and what it leaves
    undecided is dropped as ``fault`` (the build is then not clean). Up to ``max_distractors``
    valid mutants are chosen round-robin over the bug types in a seeded order: one per bug type
    first, preferring per-test outcome vectors not chosen yet, then second picks the same way.
    Deterministic for a seed whenever the verdicts are (tests that draw unseeded random numbers
    can make them vary).
    """
    report = MutationReport(seed=seed, max_distractors=max_distractors)
    chosen: dict[str, list[Mutant]] = {}
    for done, task in enumerate(tasks, start=1):
        chosen[task.id] = _TaskMutator(task, report).run(gate)
        count = len(chosen[task.id])
        report.distractors_per_task[count] = report.distractors_per_task.get(count, 0) + 1
        report.tasks += 1
        if on_task is not None:
            on_task(done, len(tasks))
    return chosen, report


class _TaskMutator:
    """The rounds of `mutate_tasks` for one task."""

    def __init__(self, task: TaskSource, report: MutationReport) -> None:
        self.task = task
        self.report = report
        self.rng = random.Random(f"{report.seed}:{task.id}")  # noqa: S311 - not for secrets
        self.seen = {ast.dump(ast.parse(task.code))}
        self.queues = find_edits(task.code, task.entry_point)
        self.valid: list[Mutant] = []
        for bug, edits in self.queues.items():
            stats = report.by_bug_type[bug]
            stats.candidates += len(edits)
            stats.no_site += not edits
            self.rng.shuffle(edits)

    def run(self, gate: Gate) -> list[Mutant]:
        width = 1
        # With one test no mutant can pass one and fail another: nothing worth running.
        while len(self.task.tests) > 1 and (batch := self._next_round(width)):
            self._verify(gate, batch)
            width *= 2
        for bug, edits in self.queues.items():
            self.report.by_bug_type[bug].untried += len(edits)
        picked = _choose(self.valid, self.rng, self.report.max_distractors)
        for mutant in self.valid:
            stats = self.report.by_bug_type[mutant.bug_type]
            if any(mutant is chosen for chosen in picked):
                stats.kept += 1
            else:
                stats.drop(DropReason.OVER_QUOTA)
        return picked

    def _next_round(self, width: int) -> list[tuple[Edit, str]]:
        """The next edits to verify (already parsed and de-duplicated); empty when done."""
        limit = self.report.max_distractors
        have = {mutant.bug_type for mutant in self.valid}
        open_types = [bug for bug, edits in self.queues.items() if edits]
        wanted = [bug for bug in open_types if bug not in have]
        if len(have) >= limit or (not wanted and len(self.valid) >= limit):
            return []
        batch: list[tuple[Edit, str]] = []
        for bug in wanted or open_types:
            queue, stats = self.queues[bug], self.report.by_bug_type[bug]
            taken = 0
            while queue and taken < width:
                edit = queue.pop(0)
                stats.tried += 1
                code = apply_edit(self.task.code, edit)
                try:
                    shape = ast.dump(ast.parse(code))
                except SyntaxError:
                    stats.drop(DropReason.PARSE_ERROR)
                    continue
                if shape in self.seen:
                    stats.drop(DropReason.DUPLICATE)
                    continue
                self.seen.add(shape)
                batch.append((edit, code))
                taken += 1
        if not batch and any(self.queues.values()):
            return self._next_round(width)  # a round of only duplicates: try the next edits
        return batch

    def _verify(self, gate: Gate, batch: list[tuple[Edit, str]]) -> None:
        metadata = [self.task.metadata] * len(batch)
        verdicts = gate.verify([code for _, code in batch], self.task.spec, metadata=metadata)
        self.report.sandbox_runs += len(batch)
        for (edit, code), verdict in zip(batch, verdicts, strict=True):
            reason = _drop_reason(verdict)
            if reason is not None:
                self.report.by_bug_type[edit.bug_type].drop(reason)
                continue
            mutant = Mutant(
                code=code,
                bug_type=edit.bug_type,
                description=edit.description,
                outcomes=tuple(verdict.outcomes),
            )
            self.valid.append(mutant)


def _drop_reason(verdict: Verdict) -> DropReason | None:
    if fault_reason(verdict) is not None:
        return DropReason.FAULT
    if verdict.status is Status.VERIFIED:
        return DropReason.PASSES_ALL
    if verdict.status is Status.TIMEOUT or any(t.fault is Reason.TIMEOUT for t in verdict.tests):
        return DropReason.TIMEOUT
    if verdict.status is Status.ERROR:
        return DropReason.ERROR
    if verdict.status is not Status.FAILED:
        return DropReason.UNVERIFIABLE
    return None if verdict.passed_tests else DropReason.FAILS_ALL


def _choose(valid: list[Mutant], rng: random.Random, limit: int) -> list[Mutant]:
    """Round-robin over bug types in a seeded order; see `mutate_tasks`."""
    order = list(BugType)
    rng.shuffle(order)
    picked: list[Mutant] = []
    outcomes: set[tuple[str, ...]] = set()
    for one_per_type, fresh_outcomes in (
        (True, True),
        (True, False),
        (False, True),
        (False, False),
    ):
        progress = True
        while progress and len(picked) < limit:
            progress = False
            for bug in order:
                if len(picked) >= limit:
                    break
                if one_per_type and any(m.bug_type is bug for m in picked):
                    continue
                pick = next(
                    (
                        m
                        for m in valid
                        if m.bug_type is bug
                        and not any(m is p for p in picked)
                        and not (fresh_outcomes and m.outcomes in outcomes)
                    ),
                    None,
                )
                if pick is not None:
                    picked.append(pick)
                    outcomes.add(pick.outcomes)
                    progress = True
    return picked
