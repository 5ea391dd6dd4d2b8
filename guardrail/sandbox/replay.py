"""Who is to blame when a sandbox container dies: replay first, blame only a proven killer.

A container can die for reasons of its own (killed by the engine or an operator, idle or mid-job,
the host short of memory) as well as because of the candidate it was judging, and from outside
the two look the same. So a fault never decides a verdict by itself:

* the jobs a dead container had not finished are replayed on a fresh container;
* the first of them (the one running when it died, or the next one to be sent) becomes the
  *suspect* and is replayed alone, on a container that has run nothing else;
* a suspect is blamed (``sandbox_fault``) only once it has killed `BLAME_AFTER` such containers
  while running alone; a suspect that finishes gets its own verdict. Neighbours are never blamed.

Every fault either makes a new suspect or counts against the current one, so a batch of ``n``
jobs ends after at most ``n * (BLAME_AFTER + 1)`` faults even if every container dies.
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = ["BLAME_AFTER", "FaultLedger"]

BLAME_AFTER = 2


class FaultLedger:
    """The jobs of one chunk still to judge, and the fault history that decides blame."""

    def __init__(self, jobs: Iterable[int]) -> None:
        self.pending = list(jobs)
        self.suspect: int | None = None
        self.solo_faults: dict[int, int] = {}

    def finished(self, jobs: Iterable[int]) -> None:
        """``jobs`` got verdicts from the supervisor."""
        done = set(jobs)
        self.pending = [job for job in self.pending if job not in done]
        if self.suspect in done:
            self.suspect = None

    def fault(self, batch: list[int], finished: Iterable[int], *, solo: bool) -> int | None:
        """The container running ``batch`` died after ``finished``; the job to blame, if any.

        ``solo``: the batch was the suspect alone on a container that had run nothing else.
        """
        self.finished(finished)
        unfinished = [job for job in batch if job in self.pending]
        if not unfinished:  # died after its last answer: nobody's doing
            return None
        first = unfinished[0]
        if not solo:
            self.suspect = first
            return None
        self.solo_faults[first] = self.solo_faults.get(first, 0) + 1
        if self.solo_faults[first] < BLAME_AFTER:
            self.suspect = first
            return None
        self.suspect = None
        self.pending.remove(first)
        return first
