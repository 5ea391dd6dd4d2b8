"""The sandbox's limits (part of every verdict-cache key) and its counters."""

from __future__ import annotations

import dataclasses
import math
import threading
from dataclasses import dataclass, field

from guardrail.errors import InputError

__all__ = ["SandboxLimits", "SandboxStats"]


@dataclass(frozen=True)
class SandboxLimits:
    """Per-container and per-process limits. Defaults suit short unit-test style checks."""

    timeout_s: float = 5.0
    memory_mb: int = 512  # per process (RLIMIT_AS) inside the container
    container_memory_mb: int = 1024
    processes: int = 32  # per job uid (RLIMIT_NPROC)
    container_pids: int = 256
    cpus: float = 1.0
    file_bytes: int = 1 << 20
    output_chars: int = 4096
    tmpfs_mb: int = 64

    def __post_init__(self) -> None:
        for field_ in dataclasses.fields(self):
            value = getattr(self, field_.name)
            if not (math.isfinite(value) and value > 0):
                raise InputError(
                    f"sandbox limit {field_.name} must be a positive finite number, got {value!r}"
                )

    def fingerprint(self) -> str:
        """Every limit, since any of them can change a verdict (part of the cache key)."""
        return "limits:" + ",".join(f"{value}" for value in dataclasses.astuple(self))


@dataclass
class SandboxStats:
    """Counters for tests and benchmarks (e.g. "the cache started no container")."""

    containers_started: int = 0
    containers_recycled: int = 0
    jobs_run: int = 0
    faults: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def add(self, **counts: int) -> None:
        with self.lock:
            for name, value in counts.items():
                setattr(self, name, getattr(self, name) + value)
