"""The `Sandbox` contract: run a batch of (candidate code, spec) jobs, return one verdict each.

`DockerSandbox` is the product. Any other implementation (a test double for policy tests, the
unsafe in-process floor in ``bench/``) must keep the same promise: a verdict of ``verified`` only
when the candidate really ran and passed every test.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self

from guardrail.spec import Spec
from guardrail.verdict import Verdict

__all__ = ["Job", "Sandbox"]


@dataclass(frozen=True, slots=True)
class Job:
    """One candidate to judge against one spec.

    ``context``: the candidate's module and package as `guardrail.context.build_job_context`
    builds them (``None``: the code runs on its own). ``bind``: what each name the tests call is
    bound to in the candidate's namespace (`guardrail.binding`; ``None``: the entry point to
    itself).
    """

    code: str
    spec: Spec
    context: dict[str, Any] | None = None
    bind: dict[str, str] | None = None


class Sandbox(ABC):
    """Runs jobs and returns their verdicts, in the order given.

    `run` is the one implementation: blocking, thread-safe, free to run jobs concurrently.
    `arun` hands it to a worker thread so an event loop stays responsive.
    """

    @property
    @abstractmethod
    def identity(self) -> str:
        """What the verdicts depend on besides code and spec (image id, runner version, limits).

        Part of every verdict-cache key, so a different image or runner never reuses a verdict.
        """

    @abstractmethod
    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        """Judge every job; one verdict per job, in order. Raises `SandboxError` if none can be."""

    async def arun(self, jobs: Sequence[Job]) -> list[Verdict]:
        return await asyncio.to_thread(self.run, jobs)

    def close(self) -> None:  # noqa: B027 - optional hook, most sandboxes hold nothing
        """Release containers or other resources. Idempotent."""

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
