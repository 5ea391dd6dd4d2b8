"""Typed errors raised by guardrail-eval.

Every eval error is an `EvalError`; the ones caused by bad input are also a
`guardrail.errors.InputError`, so the CLI maps them to exit code 2 like the core's own::

    GuardrailError (guardrail.errors)
    ├── InputError
    │   ├── PoolFormatError      (also EvalError) a pool file that cannot be used: bad JSON,
    │   │                        a missing or mistyped field, an unknown or duplicate id
    │   ├── ResultsFormatError   (also EvalError) a results/<model>.json that cannot be used
    │   ├── EvalSettingError     (also EvalError) an eval setting that cannot be used
    │   ├── LabelError           (also EvalError) pool labels that execution contradicts: a
    │   │                        canonical failing its tests, a distractor passing them all
    │   ├── OutFolderError       (also EvalError) an --out folder that holds an earlier run's
    │   │                        outputs (without --force) or files the eval did not write
    │   └── RetrieverError       (also EvalError) a user's retriever (``--retriever
    │                            module:factory``) that cannot be loaded, built or used
    └── EvalError                every error raised by guardrail-eval
        ├── OutputError          an output file (pool, results, report) cannot be written
        └── IncompleteError      sandbox faults were left after the retries (CLI exit code 4)

Format errors carry the file, the 1-based line and the field, and their message starts with
``file:line:`` so that an editor can jump to it. pydantic's validation errors are translated here
and nowhere else (`describe_validation_error`).
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from guardrail.errors import GuardrailError, InputError

__all__ = [
    "EvalError",
    "EvalSettingError",
    "FileFormatError",
    "IncompleteError",
    "LabelError",
    "OutFolderError",
    "OutputError",
    "PoolFormatError",
    "ResultsFormatError",
    "RetrieverError",
    "describe_validation_error",
    "format_location",
]


class EvalError(GuardrailError):
    """Base class of every error guardrail-eval raises on purpose."""


class EvalSettingError(EvalError, InputError):
    """An eval setting that cannot be used (for example ``--visible-tests 0``)."""


class LabelError(EvalError, InputError):
    """Labels of a pool that its own execution contradicts (`guardrail_eval.validation`).

    The message names every contradiction with its file and line; nothing has been counted
    or written. The CLI exits with code 2.
    """

    hint = (
        "fix the named labels (or the code or tests), or pass --relabel to evaluate with the"
        " labels execution gives (each change is listed in summary.json and the report)"
    )


class OutFolderError(EvalError, InputError):
    """An ``--out`` folder that may not take this run's outputs (`guardrail_eval.outputs`)."""


class RetrieverError(EvalError, InputError):
    """A user's retriever that cannot be evaluated (`guardrail_eval.custom`).

    A ``module:factory`` spec that does not parse, a module that does not import, a missing or
    uncallable factory, a factory that raises or returns no retriever of its framework, a
    retriever that raises, or a result that names no snippet of the pool. The message names the
    factory (and the query, for a retrieval).
    """

    hint = "see `guardrail audit retriever --help` for the factory contract"


class OutputError(EvalError):
    """An output file cannot be written (permissions, a full disk, a path that is a file)."""

    hint = "choose another output directory with --out, or free some space"


class IncompleteError(EvalError):
    """Sandbox faults (not the candidates') were still there after the retries.

    Their verdicts cannot be counted as "did not pass", so the results are incomplete; the
    message names the first few. The CLI exits with code 4.
    """

    hint = (
        "run again on a less loaded machine (faults and starved timeouts are never cached, so"
        " only they are re-run); `guardrail sandbox check` tests the sandbox itself"
    )


class FileFormatError(EvalError, InputError):
    """A file that cannot be used, with where the problem is.

    Attributes:
        path: the file.
        line: 1-based line of the problem, or None when the problem concerns the whole file.
        field: dotted location of the offending field (``test_suite[2]``), or "" when none.
    """

    def __init__(
        self,
        path: Path,
        line: int | None,
        field: str,
        problem: str,
        *,
        hint: str | None = None,
    ) -> None:
        self.path = path
        self.line = line
        self.field = field
        self.problem = problem
        where = f"{path}:{line}" if line is not None else str(path)
        what = f"{field}: {problem}" if field else problem
        super().__init__(f"{where}: {what}", hint=hint)


class PoolFormatError(FileFormatError):
    """A pool file (corpus.jsonl, queries.jsonl or an optional file) that cannot be used."""

    hint = "fix the line named above; the format is described in docs of `guardrail_eval.pool`"


class ResultsFormatError(FileFormatError):
    """A ``results/<model>.json`` file that cannot be used."""

    hint = "fix the file named above, or re-download the release's results/ folder"


def format_location(location: tuple[str | int, ...]) -> str:
    """A pydantic location as text: ``("test_suite", 2)`` -> ``"test_suite[2]"``."""
    text = ""
    for part in location:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else part
    return text


def describe_validation_error(exc: ValidationError) -> tuple[tuple[str | int, ...], str]:
    """The first problem of a pydantic error: its location and a message quoting the bad value."""
    first = exc.errors(include_url=False)[0]
    location = tuple(first["loc"])
    kind = first["type"]
    if kind == "missing":
        return location, "required field is missing"
    message = str(first["msg"]).removeprefix("Value error, ")
    if kind in {"model_type", "dict_type"} or "input" not in first:
        return location, message
    bad = repr(first["input"])
    if len(bad) > 80:
        bad = bad[:77] + "..."
    return location, f"{message} (got {bad})"
