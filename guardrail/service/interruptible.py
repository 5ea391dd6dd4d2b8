"""`InterruptibleSandbox`: any `Sandbox`, with a request's jobs dispatched in slices that stop
when the request is cancelled (its client went away, its deadline passed).

The service runs each request's gate call in a worker thread whose context carries the
request's cancel event (`CANCEL`). Between slices of at most `SLICE_PER_CONTAINER` jobs per
container the wrapper checks it and, once it is set, raises `RequestCancelled`: no verdict is
made up for the jobs that did not run (the Gate caches nothing of a call that raised), and the
jobs of a slice already sent run to their end (each bounded by the per-candidate timeout). With
no event in the context (the library, the CLI) it is the wrapped sandbox, unchanged.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from contextvars import ContextVar

from guardrail.sandbox.base import Job, Sandbox
from guardrail.verdict import Verdict

__all__ = ["CANCEL", "SLICE_PER_CONTAINER", "InterruptibleSandbox", "RequestCancelled"]

CANCEL: ContextVar[threading.Event | None] = ContextVar("guardrail_request_cancel", default=None)
"""The cancel event of the request whose jobs this thread runs (None outside the service)."""

SLICE_PER_CONTAINER = 4
"""Jobs per container between two looks at the cancel event: a round trip carries several jobs
(the speed of the warm pool), and a cancelled request still stops within a few jobs."""


class RequestCancelled(Exception):  # noqa: N818 - an outcome, like asyncio.CancelledError
    """The request was cancelled before all its jobs were dispatched; no verdict stands."""


class InterruptibleSandbox(Sandbox):
    """``inner`` (the sandbox that judges), stopping between slices of a cancelled request."""

    def __init__(self, inner: Sandbox) -> None:
        self.inner = inner

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def slice_size(self) -> int:
        return SLICE_PER_CONTAINER * max(1, int(getattr(self.inner, "pool_size", 1)))

    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        cancel = CANCEL.get()
        if cancel is None:
            return self.inner.run(jobs)
        verdicts: list[Verdict] = []
        size = self.slice_size
        for start in range(0, len(jobs), size):
            if cancel.is_set():
                raise RequestCancelled(
                    f"cancelled after {start} of {len(jobs)} jobs were dispatched"
                )
            verdicts.extend(self.inner.run(jobs[start : start + size]))
        return verdicts

    def close(self) -> None:
        self.inner.close()
