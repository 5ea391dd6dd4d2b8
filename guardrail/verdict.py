"""`Verdict`: what the sandbox concluded about one candidate.

Statuses (only ``verified`` ever means "ran and passed every test"):

* ``verified``      every test ran and passed in the judge;
* ``failed``        at least one test failed (``FAIL``) or raised (``ERROR:<type>``);
* ``error``         the candidate could not be judged because of itself: it does not parse, it
                    raised or exited while loading, it has no entry point, it crashed mid-test;
                    also the sandbox faults that end a job (an unresponsive container);
* ``timeout``       the candidate ran out of wall-clock time;
* ``unverifiable``  nothing could decide: no tests, non-Python text (nothing ran), or tests ran
                    but a value could not cross the sandbox boundary as plain data (reason
                    ``unserialisable``: any candidate can choose this by returning a custom
                    object, so the policy ranks it after candidates that had no tests at all);
                    reason ``refused_facility``: the code used something the sandbox refuses
                    (System V IPC, POSIX message queues, kernel keyrings: they outlive a job),
                    named in the message; the refusal's errno is seen first in the candidate's
                    process, so any candidate can claim it too, and it ranks with
                    ``unserialisable``: never ``verified``, never ``failed``.

`reason` gives the precise cause in a stable machine-readable word. Per-test outcomes use the
ExecRetrieval release's words: ``pass``, ``FAIL``, ``TIMEOUT``, ``ERROR:<type>``. An outcome
word is never evidence of a fault: ``TestOutcome.fault`` is, and only the judge's own code sets it.


Much of a verdict's text comes from the candidate (its exception's type name and message, its
output). Validators store every string as `guardrail.safetext.clean` text (controls, bidi
controls and lone surrogates escaped, so the SQLite cache and every JSON encoder accept it) and
capped; ``<type>`` keeps identifier characters only (at most 100). Validating a validated verdict
changes nothing, so verdicts round-trip through JSON and the cache unchanged.
"""

from __future__ import annotations

import re
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from guardrail.safetext import clean, identifier

__all__ = ["Observation", "Reason", "Status", "TestOutcome", "Verdict"]

PASS = "pass"  # noqa: S105 - an outcome word, not a password
FAIL = "FAIL"
TIMEOUT = "TIMEOUT"
ERROR_PREFIX = "ERROR:"
_OUTCOME_WORDS = frozenset({PASS, FAIL, TIMEOUT})

# Caps on stored text (the runner caps it too; these hold whatever built the verdict). Every
# string is also made encodable (`guardrail.safetext.clean`): the SQLite cache, JSON and every
# output must accept any verdict, and validating a validated verdict changes nothing.
TEST_LIMIT = 20_000
DETAIL_LIMIT = 2_000
MESSAGE_LIMIT = 4_000
OUTPUT_LIMIT = 64_000


class Status(StrEnum):
    """The five verdict statuses; see the module docstring."""

    VERIFIED = "verified"
    FAILED = "failed"
    ERROR = "error"
    TIMEOUT = "timeout"
    UNVERIFIABLE = "unverifiable"


class Reason(StrEnum):
    """Why a verdict has its status (stable words for programs and reports)."""

    PASSED = "passed"
    TESTS_FAILED = "tests_failed"
    SYNTAX_ERROR = "syntax_error"
    NOT_PYTHON = "not_python"
    MISSING_ENTRY_POINT = "missing_entry_point"
    LOAD_ERROR = "load_error"
    CANDIDATE_EXITED = "candidate_exited"
    TIMEOUT = "timeout"
    UNSERIALISABLE = "unserialisable"
    NO_TESTS = "no_tests"
    SETUP_ERROR = "setup_error"
    PROTOCOL_VIOLATION = "protocol_violation"
    TOO_LARGE = "too_large"
    SANDBOX_FAULT = "sandbox_fault"
    MISSING_CONTEXT = "missing_context"
    MISSING_DEPENDENCY = "missing_dependency"
    REFUSED_FACILITY = "refused_facility"


OBSERVED_LIMIT = 1_000
_SHA256 = re.compile(r"[0-9a-f]{64}")
_MAX_AFTER = 64


class Observation(BaseModel):
    """What one candidate did on one probe (`guardrail.questions`), as the judge saw it.

    ``kind``: ``value`` (it returned plain data: ``text`` is the judge's repr, capped, ``key``
    the sha256 of its canonical form, equal for values that compare equal), ``raises`` (``text``
    is the exception's type name, ``key`` ``raises:<name>``) or ``unjudged`` (a timeout, a value
    that cannot cross or be compared, a crash: never compared with anything). Keys are derived or
    checked here, so a malformed one can only make an observation ``unjudged``.
    """

    model_config = ConfigDict(frozen=True)

    kind: Literal["value", "raises", "unjudged"]
    text: str = ""
    key: str = "unjudged"
    after: tuple[str, ...] = Field(
        default=(),
        description="a value observation's mutable arguments after the call (their reprs, in"
        " the probe's order): what the candidate changed in place; the key covers them",
    )

    @model_validator(mode="after")
    def _consistent(self) -> Observation:
        if self.kind == "raises":
            name = identifier(self.text)
            object.__setattr__(self, "text", name)
            object.__setattr__(self, "key", f"raises:{name}")
        elif self.kind == "value" and _SHA256.fullmatch(self.key):
            object.__setattr__(self, "text", clean(self.text, OBSERVED_LIMIT))
            after = tuple(clean(text, OBSERVED_LIMIT) for text in self.after[:_MAX_AFTER])
            object.__setattr__(self, "after", after)
            return self
        else:
            object.__setattr__(self, "kind", "unjudged")
            object.__setattr__(self, "text", clean(self.text, OBSERVED_LIMIT))
            object.__setattr__(self, "key", "unjudged")
        object.__setattr__(self, "after", ())
        return self

    @property
    def judged(self) -> bool:
        return self.kind != "unjudged"

    @classmethod
    def unjudged(cls, why: str) -> Observation:
        return cls(kind="unjudged", text=why)


class TestOutcome(BaseModel):
    """One test statement and what happened when the judge ran it."""

    __test__ = False  # not a pytest class

    model_config = ConfigDict(frozen=True)

    test: str
    outcome: str = Field(description="pass, FAIL, TIMEOUT or ERROR:<type>")
    detail: str = ""
    fault: Reason | None = Field(
        default=None,
        description="why the judge could not judge this test (timeout, candidate_exited,"
        " protocol_violation, unserialisable, missing_context, missing_dependency,"
        " refused_facility); set only by"
        " the judge, never from a name",
    )
    observed: Observation | None = Field(
        default=None,
        description="what the candidate returned or raised in a probe test (`__observe__`);"
        " set only by the judge, on a test it judged",
    )
    returned: Observation | None = Field(
        default=None,
        description="what the call that a failing assert checked gave (``f(2)`` in"
        " ``assert f(2) == 5``): the judge's capped repr of a plain value and its equality key,"
        " or ``unjudged`` for a candidate object; a raise is the outcome's ``ERROR:<type>``."
        " Set only by the judge, on a test it judged ``FAIL``; never text the candidate chose",
    )
    shown_by_candidate: bool = Field(
        default=False,
        description="a doctest example of this test showed or printed an object that is not"
        " plain data, and the text compared was that object's own repr/str, computed in the"
        " candidate's process (as doctest compares it); set only by the judge",
    )

    @field_validator("test")
    @classmethod
    def _safe_test(cls, value: str) -> str:
        return clean(value, TEST_LIMIT)

    @field_validator("outcome")
    @classmethod
    def _safe_outcome(cls, value: str) -> str:
        """A known word, or ``ERROR:`` and an identifier-like name of at most 100 characters.

        Any other word becomes ``ERROR:<word>``: only exactly ``pass`` ever passes. A new outcome
        word must be added to ``_OUTCOME_WORDS`` to be kept as it is.
        """
        if value in _OUTCOME_WORDS:
            return value
        return ERROR_PREFIX + identifier(value.removeprefix(ERROR_PREFIX))

    @field_validator("detail")
    @classmethod
    def _safe_detail(cls, value: str) -> str:
        return clean(value, DETAIL_LIMIT)

    @property
    def passed(self) -> bool:
        return self.outcome == PASS


class Verdict(BaseModel):
    """The judge's conclusion about one candidate. Round-trips through JSON unchanged."""

    model_config = ConfigDict(frozen=True)

    status: Status
    reason: Reason
    message: str = ""
    tests: tuple[TestOutcome, ...] = ()
    alias: str | None = Field(
        default=None, description="the candidate's function bound to the entry point, if renamed"
    )
    duration_s: float = 0.0
    cpu_s: float | None = Field(
        default=None, description="CPU seconds the candidate process used, when known"
    )
    stdout: str = ""
    stderr: str = ""
    cached: bool = False

    @field_validator("message")
    @classmethod
    def _safe_message(cls, value: str) -> str:
        return clean(value, MESSAGE_LIMIT)

    @field_validator("alias")
    @classmethod
    def _safe_alias(cls, value: str | None) -> str | None:
        return None if value is None else identifier(value)

    @field_validator("stdout", "stderr")
    @classmethod
    def _safe_output(cls, value: str) -> str:
        return clean(value, OUTPUT_LIMIT)

    @property
    def verified(self) -> bool:
        return self.status is Status.VERIFIED

    @property
    def passed_tests(self) -> list[str]:
        return [t.test for t in self.tests if t.passed]

    @property
    def failed_tests(self) -> list[str]:
        return [t.test for t in self.tests if not t.passed]

    @property
    def busy_timeout(self) -> bool:
        """A timeout spent computing (>= 80% of the wall time on the CPU): an endless loop that
        would time out again, not a candidate starved by a loaded machine."""
        return (
            self.status is Status.TIMEOUT
            and self.cpu_s is not None
            and self.cpu_s >= 0.8 * self.duration_s
        )

    @property
    def outcomes(self) -> list[str]:
        """Per-test outcome words in test order, as in the release's ``test_results``."""
        return [t.outcome for t in self.tests]

    @classmethod
    def unjudged(cls, status: Status, reason: Reason, message: str) -> Verdict:
        """A verdict reached without running any test (input problems, sandbox faults)."""
        return cls(status=status, reason=reason, message=message)
