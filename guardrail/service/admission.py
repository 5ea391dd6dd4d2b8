"""Admission: a bounded queue in front of the gate, per-request deadlines and cancellation.

At most ``concurrency`` requests run at once (each in a worker thread of its own pool); up to
``capacity`` more wait. One more is refused at once with `QueueFull` (429 and Retry-After), and
every request while draining with `Draining` (503). A request's deadline counts from its arrival,
its wait in the queue included: when it passes (`DeadlineExceeded`, 504), or the client
disconnects (`ClientGone`), the request's cancel event is set, so its jobs not yet dispatched
never run (`guardrail.service.interruptible`). Its slot is held until its thread has stopped, so
a cancelled request never lets more work run than ``concurrency`` allows.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import math
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from guardrail.service.interruptible import CANCEL

__all__ = ["Admission", "ClientGone", "DeadlineExceeded", "Draining", "QueueFull", "Refused"]

T = TypeVar("T")


class Refused(Exception):  # noqa: N818 - the family of "not run", each an outcome
    """A request that was not (fully) run; ``retry_after_s`` when trying again may work."""

    def __init__(self, message: str, retry_after_s: int | None = None) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class QueueFull(Refused):
    """Every slot runs and the queue is full."""


class Draining(Refused):
    """The service is shutting down (SIGTERM): in-flight requests finish, new ones are refused."""


class DeadlineExceeded(Refused):
    """The request's deadline passed before it was answered; its remaining jobs were cancelled."""


class ClientGone(Refused):
    """The client disconnected; its remaining jobs were cancelled."""


class Admission:
    """The queue and the worker threads of one service."""

    def __init__(self, concurrency: int, capacity: int, deadline_s: float) -> None:
        self.concurrency = concurrency
        self.capacity = capacity
        self.deadline_s = deadline_s
        self.running = 0
        self.waiting = 0
        self.draining = False
        self.cancelled = {"deadline": 0, "disconnected": 0}
        self._slots = asyncio.Semaphore(concurrency)
        self._executor = ThreadPoolExecutor(concurrency, thread_name_prefix="guardrail-serve")
        self._mean_s = 1.0  # moving mean of run times, for Retry-After

    def retry_after_s(self) -> int:
        """A guess at when a slot frees up: the mean run time times the queue's depth."""
        return max(1, math.ceil(self._mean_s * (self.waiting + 1) / self.concurrency))

    async def run(self, work: Callable[[], T], disconnected: Callable[[], Awaitable[None]]) -> T:
        """``work()`` in a worker thread once a slot is free, cancelled at the deadline or when
        ``disconnected()`` completes; the request's cancel event is in the thread's context."""
        if self.draining:
            raise Draining("the service is shutting down", retry_after_s=5)
        if self._slots.locked() and self.waiting >= self.capacity:
            raise QueueFull(
                f"all {self.concurrency} slots are busy and {self.waiting} requests wait",
                retry_after_s=self.retry_after_s(),
            )
        deadline = time.monotonic() + self.deadline_s
        watcher = asyncio.ensure_future(disconnected())
        try:
            await self._acquire(deadline, watcher)
            try:
                return await self._run(work, deadline, watcher)
            finally:
                self._slots.release()
        finally:
            watcher.cancel()

    async def _acquire(self, deadline: float, watcher: asyncio.Future[None]) -> None:
        self.waiting += 1
        try:
            slot = asyncio.ensure_future(self._slots.acquire())
            racing: set[asyncio.Future[Any]] = {slot, watcher}
            done, _ = await asyncio.wait(
                racing,
                timeout=max(0.0, deadline - time.monotonic()),
                return_when=asyncio.FIRST_COMPLETED,
            )
            if slot in done:
                return
            slot.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                if await slot:  # acquired just as it was cancelled
                    self._slots.release()
            raise self._refusal(watcher in done, "while it waited in the queue")
        finally:
            self.waiting -= 1

    async def _run(
        self, work: Callable[[], T], deadline: float, watcher: asyncio.Future[None]
    ) -> T:
        cancel = threading.Event()
        context = contextvars.copy_context()
        context.run(CANCEL.set, cancel)
        started = time.monotonic()
        self.running += 1
        try:
            future = asyncio.get_running_loop().run_in_executor(self._executor, context.run, work)
            racing: set[asyncio.Future[Any]] = {future, watcher}
            try:
                done, _ = await asyncio.wait(
                    racing,
                    timeout=max(0.0, deadline - time.monotonic()),
                    return_when=asyncio.FIRST_COMPLETED,
                )
            except asyncio.CancelledError:
                cancel.set()
                raise
            if future in done:
                self._mean_s = 0.8 * self._mean_s + 0.2 * (time.monotonic() - started)
                return future.result()
            cancel.set()
            with contextlib.suppress(Exception):  # it stops at its next slice; nothing stands
                await future
            raise self._refusal(watcher in done, "while it ran")
        finally:
            self.running -= 1

    def _refusal(self, gone: bool, when: str) -> Refused:
        if gone:
            self.cancelled["disconnected"] += 1
            return ClientGone(f"the client disconnected {when}; its remaining jobs were cancelled")
        self.cancelled["deadline"] += 1
        return DeadlineExceeded(
            f"the request's deadline of {self.deadline_s:g} s passed {when};"
            " its remaining jobs were cancelled",
            retry_after_s=self.retry_after_s(),
        )

    def close(self) -> None:
        self._executor.shutdown(wait=False, cancel_futures=True)
