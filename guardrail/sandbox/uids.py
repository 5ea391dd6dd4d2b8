"""Disjoint user-id ranges for sandbox containers.

Each container's supervisor runs job ``n`` under uids ``base + 2n`` (candidate) and
``base + 2n + 1`` (judge). RLIMIT_NPROC counts processes per uid across the whole kernel, and a
uid shared by two containers would let one container's candidate count against (or, with a shared
tmpfs, own files of) another's. So ranges must not overlap: not within this process (never
reused, even after the container is gone) and not with the live guardrail containers on the
engine, whose base and span are labels (`UID_BASE_LABEL`, `UID_SPAN_LABEL`) read back before a
base is drawn.

The space is every uid from `UID_FLOOR` to 2**32 - 2 (2**32 - 1 is ``(uid_t) -1``, "no uid"), so
a random draw of a range of a few thousand uids collides with another process's draw with a
probability around 1e-6 per pair even before the engine is asked.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterable
from typing import Any

__all__ = ["RANGES", "UID_BASE_LABEL", "UID_SPAN_LABEL", "UidRanges", "live_ranges", "uid_span"]

UID_BASE_LABEL = "guardrail.uid_base"
UID_SPAN_LABEL = "guardrail.uid_span"
# Above every uid a distribution or a user namespace mapping hands out in practice.
UID_FLOOR = 100_000_000
UID_CEILING = 2**32 - 2  # the highest valid uid
_SLACK = 16


def uid_span(jobs_per_container: int) -> int:
    """The uids one container needs: two per job (candidate, judge), numbered from 1, plus slack."""
    return 2 * (jobs_per_container + 1) + _SLACK


class UidRanges:
    """Hands out uid ranges that never overlap one another or the ranges given as ``taken``."""

    def __init__(self) -> None:
        self._given: list[tuple[int, int]] = []
        self._lock = threading.Lock()

    def allocate(self, span: int, taken: Iterable[tuple[int, int]] = ()) -> int:
        """A base such that ``[base, base + span)`` is fresh; ``taken`` are (base, span) pairs."""
        if not 0 < span <= UID_CEILING - UID_FLOOR:
            raise ValueError(f"a uid range of {span} uids does not fit the uid space")
        with self._lock:
            busy = [*self._given, *taken]
            for _ in range(1000):
                base = UID_FLOOR + secrets.randbelow(UID_CEILING - UID_FLOOR - span + 2)
                if not any(_overlap(base, span, other) for other in busy):
                    self._given.append((base, span))
                    return base
        # Only reachable when the space is nearly full (millions of live ranges).
        raise RuntimeError("no free uid range for a sandbox container")


def live_ranges(client: Any) -> list[tuple[int, int]]:
    """(base, span) of every running guardrail container on ``client``'s engine."""
    ranges = []
    for summary in client.api.containers(filters={"label": UID_BASE_LABEL}):
        labels = summary.get("Labels") or {}
        with contextlib.suppress(KeyError, ValueError):  # a foreign or damaged label: skip it
            ranges.append((int(labels[UID_BASE_LABEL]), int(labels[UID_SPAN_LABEL])))
    return ranges


def _overlap(base: int, span: int, other: tuple[int, int]) -> bool:
    other_base, other_span = other
    return base < other_base + other_span and other_base < base + span


# One allocator per process: every pool in this process draws from it.
RANGES = UidRanges()
