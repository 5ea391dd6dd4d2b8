"""What an audit reports: near-clone pairs that behave differently, with the evidence.

A `Finding` names both functions (file, line, qualified name), how alike they are (token and
embedding similarity), the input on which they diverge (positional and keyword arguments as
Python literal text, ready to paste), what each side did (its value's repr or the exception it
raised, as the sandbox's judge rendered it), whether each side passes its own stored tests
(doctests), and a graded severity.

Identity: `Finding.fingerprint` hashes the rule and the two functions' module and qualified
names, never line numbers, absolute paths or the input, so a finding keeps its identity when code
moves within a file, the tree is checked out elsewhere, or another input shows the divergence.

Text from the audited code (values, exception names, names) is data: every renderer escapes it
(`guardrail.safetext`); the models hold it capped and cleaned.
"""

from __future__ import annotations

import hashlib
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, field_validator

from guardrail.safetext import clean

__all__ = [
    "RULES",
    "AuditCounts",
    "AuditReport",
    "Finding",
    "NotCompared",
    "Outcome",
    "Place",
    "ProbeInput",
    "Rule",
    "RuleInfo",
    "Severity",
    "Site",
    "TestStatus",
    "fingerprint",
    "grade",
]

OUTPUT_LIMIT = 2_000  # characters of one side's value or exception kept in a finding
TESTED_ORIGINS = frozenset({"test", "doctest"})
"""Probe origins that come from a function's own stored tests or docstring examples."""

TestStatus = Literal["pass", "fail", "none", "unjudged"]
"""A side against its own stored tests: passed all, failed one, had none, could not be judged."""


class Severity(StrEnum):
    """How much a finding matters; ordered ``high > medium > low``.

    * ``high``: the diverging input comes from a stored test or doctest and one side passes its
      tests; or one side passes its tests and the other fails its own: one of the two is
      wrong where it was meant to be checked.
    * ``medium``: one of the two holds (a tested input, or a side that passes its tests), or
      one side raises where the other returns a value.
    * ``low``: the two return different values on a generated input, and neither has tests
      that pass: a difference in behaviour, not yet known to be a bug. Also any divergence on a
      guessed input (origin ``guess``: nothing said what the function takes), unless one side
      passes its tests and the other fails its own: near-clones that take different arguments
      diverge on a guess without either being wrong.
    """

    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"

    @property
    def rank(self) -> int:
        return {"high": 3, "medium": 2, "low": 1}[self.value]

    @property
    def sarif_level(self) -> Literal["error", "warning", "note"]:
        levels: dict[str, Literal["error", "warning", "note"]] = {
            "high": "error",
            "medium": "warning",
            "low": "note",
        }
        return levels[self.value]

    @property
    def security_severity(self) -> str:
        """GitHub code scanning's 0.0-10.0 score (7.0+ high, 4.0+ medium, below: low)."""
        return {"high": "7.5", "medium": "5.0", "low": "2.0"}[self.value]


class Rule(StrEnum):
    """One stable rule id per kind of finding (SARIF ``ruleId``)."""

    DIVERGES_ON_TESTED_INPUT = "GRA001"
    DIVERGES_ON_GENERATED_INPUT = "GRA002"


class RuleInfo(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str
    short: str
    full: str


RULES: dict[Rule, RuleInfo] = {
    Rule.DIVERGES_ON_TESTED_INPUT: RuleInfo(
        name="NearCloneDivergesOnTestedInput",
        short="Near-clones behave differently on an input from their own tests",
        full="Two functions a retriever cannot tell apart (near-identical code and embeddings)"
        " return different results, or one raises, on arguments taken from a stored test or"
        " docstring example of one of them. An agent retrieving either gets whichever ranks"
        " first; at least one of the two is wrong on an input its author checked.",
    ),
    Rule.DIVERGES_ON_GENERATED_INPUT: RuleInfo(
        name="NearCloneDivergesOnGeneratedInput",
        short="Near-clones behave differently on a generated input",
        full="Two functions a retriever cannot tell apart return different results, or one"
        " raises, on arguments generated from their tests, docstrings or type hints (a"
        " mutation of a tested input, or a value of the annotated type).",
    ),
}


class Outcome(BaseModel):
    """What one side did on the diverging input."""

    model_config = ConfigDict(frozen=True)

    kind: Literal["value", "raises", "yields"]
    text: str  # the value's repr, the exception's type name, or an iterator's items and ending

    @field_validator("text")
    @classmethod
    def _capped(cls, value: str) -> str:
        return clean(value, OUTPUT_LIMIT)


class Place(BaseModel):
    """Where a function is."""

    model_config = ConfigDict(frozen=True)

    id: str
    file: str  # relative to ``root`` (posix), as indexed
    root: str
    module: str
    qualified_name: str
    line: int
    end_line: int

    @property
    def identity(self) -> str:
        """Module (or file) and qualified name: what stays the same when the tree moves."""
        return f"{self.module or self.file}:{self.qualified_name}"


class Site(Place):
    """One side of a finding: where the function is, its own tests, what it did."""

    tests: TestStatus
    output: Outcome


class NotCompared(BaseModel):
    """A near-clone pair the audit could not compare, and why: never a silent "same".

    ``category`` is the key of `AuditCounts.pairs_not_run` it is counted under (``method``,
    ``property``, ``async-generator``, ``no-inputs``, ``not-observed``...); ``reason`` says it in
    words, naming the side it is about.
    """

    model_config = ConfigDict(frozen=True)

    left: Place
    right: Place
    category: str
    reason: str
    token_similarity: float | None
    embedding_similarity: float | None

    @field_validator("reason")
    @classmethod
    def _capped(cls, value: str) -> str:
        return clean(value, OUTPUT_LIMIT)

    @property
    def message(self) -> str:
        """One plain-text sentence (callers escape it for their output)."""
        return (
            f"{self.left.qualified_name} and its near-clone {self.right.qualified_name} were not"
            f" compared: {self.reason}"
        )


class ProbeInput(BaseModel):
    """The diverging input: arguments as Python literal source text."""

    model_config = ConfigDict(frozen=True)

    args: tuple[str, ...]
    kwargs: dict[str, str]
    origin: str  # where the input came from: test, doctest, mutation, type-hint, guess

    def call(self, name: str) -> str:
        """``name(args..., k=v...)``, ready to paste."""
        parts = [*self.args, *(f"{key}={value}" for key, value in self.kwargs.items())]
        return f"{name}({', '.join(parts)})"


class Finding(BaseModel):
    """Two near-clones that diverge on an input; see the module docstring."""

    model_config = ConfigDict(frozen=True)

    rule: Rule
    severity: Severity
    fingerprint: str
    left: Site
    right: Site
    token_similarity: float | None
    embedding_similarity: float | None
    input: ProbeInput
    diverging_inputs: int  # how many of the inputs tried split the two
    inputs_tried: int

    @property
    def message(self) -> str:
        """One plain-text sentence (callers escape it for their output)."""
        left, right = self.left, self.right
        return (
            f"{left.qualified_name} and its near-clone {right.qualified_name} diverge on"
            f" {self.input.call(left.qualified_name)}: {_said(left.output)} vs"
            f" {_said(right.output)} ({self.diverging_inputs} of {self.inputs_tried} inputs"
            f" differ; tests: {left.tests} vs {right.tests})"
        )


class AuditCounts(BaseModel):
    """How much the audit looked at and ran."""

    model_config = ConfigDict(frozen=True)

    snippets: int
    compared: int
    candidate_pairs: int
    confirmed_pairs: int
    clusters: int
    embedded: int = 0  # snippets embedded for this audit (those of candidate pairs)
    pairs_run: int  # confirmed pairs both of whose sides were run and compared
    pairs_not_run: dict[str, int]  # why the others were not: "property", "not-observed", ...
    sandbox_runs: int  # candidate executions: stored tests and probes
    inputs_tried: int


class AuditReport(BaseModel):
    """Everything one audit found, in a stable order (severity, then fingerprint)."""

    model_config = ConfigDict(frozen=True)

    target: str  # the tree audited, or the collection
    counts: AuditCounts
    findings: tuple[Finding, ...]
    seconds: dict[str, float]  # wall time of each phase
    not_compared: tuple[NotCompared, ...] = ()
    """Every confirmed pair that was not compared, with the reason (`AuditCounts.pairs_not_run`
    counts them by category)."""
    skipped: dict[str, int] = {}
    """Files of the audited PATH that were not read or not parsed, counted by kind (``symlink``,
    ``not_regular``, ``too_large``, ``too_deep``, ``syntax_error``, ``too_complex``...)."""
    skipped_files: tuple[str, ...] = ()
    """Each of them (and each function left out), ``file[:line]: reason``."""

    def at_least(self, severity: Severity) -> list[Finding]:
        return [f for f in self.findings if f.severity.rank >= severity.rank]


def fingerprint(rule: Rule, left: Site, right: Site) -> str:
    """sha256 of the rule and the two sides' identities (order-free); see the module docstring."""
    sides = sorted([left.identity, right.identity])
    text = "\x1f".join(["guardrail-audit/v1", rule.value, *sides])
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def grade(origin: str, left: Site, right: Site) -> Severity:
    """The severity of a divergence; the rules are `Severity`'s."""
    tested_input = origin in TESTED_ORIGINS
    statuses = {left.tests, right.tests}
    passes = "pass" in statuses
    if (tested_input and passes) or statuses == {"pass", "fail"}:
        return Severity.HIGH
    if origin == "guess":
        return Severity.LOW
    kinds = {left.output.kind, right.output.kind}
    raises_vs_value = "raises" in kinds and len(kinds) == 2
    if tested_input or passes or raises_vs_value:
        return Severity.MEDIUM
    return Severity.LOW


def _said(outcome: Outcome) -> str:
    verbs = {"raises": "raises", "yields": "returns an iterator yielding"}
    return f"{verbs.get(outcome.kind, 'returns')} {outcome.text}"
