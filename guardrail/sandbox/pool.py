"""The pool behind `DockerSandbox`: a bounded set of long-lived containers, reused while healthy.

At most ``size`` containers exist at once, idle or busy. A released container goes back on the
idle stack unless it faulted, has run ``jobs_per_container`` jobs or the pool is closed; then it
is killed by id and its slot is free. ``acquire(fresh=True)`` gives a container that has run
nothing yet (for replaying a suspect alone, ``replay.py``), recycling an idle used one for its
slot. Every container is held from its creation to its removal, so `ContainerPool.shutdown` (a
close, an interrupt) kills busy ones as well as idle ones, and one created after it is killed at
once.
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Callable
from typing import Generic, Protocol, TypeVar

from guardrail.errors import SandboxError
from guardrail.sandbox.limits import SandboxStats

__all__ = ["ContainerPool"]


class _Poolable(Protocol):
    jobs_done: int

    def kill(self) -> bool: ...


C = TypeVar("C", bound=_Poolable)


class ContainerPool(Generic[C]):
    """Slots, reuse and shutdown; ``start`` makes a new container (and may raise)."""

    def __init__(
        self, size: int, jobs_per_container: int, start: Callable[[], C], stats: SandboxStats
    ) -> None:
        self.size = size
        self.jobs_per_container = jobs_per_container
        self.closed = False
        self._start = start
        self._stats = stats
        self._idle: queue.LifoQueue[C] = queue.LifoQueue()
        self._held: set[C] = set()
        self._live = 0
        self._lock = threading.Lock()

    @property
    def live(self) -> int:
        """Containers that exist now, idle or busy (for the service's health figures)."""
        return self._live

    def acquire(self, *, fresh: bool = False) -> C:
        """An idle container, or a new one while fewer than ``size`` exist."""
        while True:
            stale = None
            with self._lock:
                if self.closed:
                    raise SandboxError("the sandbox is closed")
                with contextlib.suppress(queue.Empty):
                    container = self._idle.get_nowait()
                    if not (fresh and container.jobs_done):
                        return container
                    stale = container  # its slot goes to the fresh container
                    break
                if self._live < self.size:
                    self._live += 1
                    break
            with contextlib.suppress(queue.Empty):  # wait for a release, then decide above
                self._idle.put(self._idle.get(timeout=0.05))
        if stale is not None:
            stale.kill()
            self._stats.add(containers_recycled=1)
        try:
            return self._start()
        except BaseException:
            with self._lock:
                self._live -= 1
            raise

    def release(self, container: C, *, healthy: bool) -> None:
        if healthy and not self.closed and container.jobs_done < self.jobs_per_container:
            self._idle.put(container)
            return
        container.kill()
        self._stats.add(containers_recycled=1)
        with self._lock:
            self._live -= 1

    def hold(self, container: C) -> None:
        """Track a container from its creation; after `shutdown` it is killed at once."""
        self._held.add(container)
        if self.closed:
            container.kill()
            raise SandboxError("the sandbox is closed")

    def forget(self, container: C) -> None:
        """The container is gone (killed and removed, or its removal is retried elsewhere)."""
        self._held.discard(container)

    def shutdown(self) -> int:
        """Close: kill every held container, idle or busy; return how many were removed."""
        self.closed = True
        # A snapshot: a worker thread may forget one meanwhile (tuple() copies under the GIL).
        return sum(container.kill() for container in tuple(self._held))
