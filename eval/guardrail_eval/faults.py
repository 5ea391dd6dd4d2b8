"""Sandbox faults (not the candidate's): which verdicts they are, and re-running them.

A verdict is a *fault* (`fault_reason`) when the machine, not the candidate, decided it:

* ``sandbox_fault``: the container died or stopped answering during the job;
* ``starved_timeout``: a timeout that is not busy (`Verdict.busy_timeout` is false): the
  candidate spent under 80% of the wall time on the CPU, so a loaded machine starved it and an
  idle one might have let it finish.

Counting a fault as "did not pass" would change published numbers with the load of the machine.
`RetryingSandbox` sits between a Gate and its sandbox and re-runs every faulted job a bounded
number of times: a sandbox fault on the same sandbox (which has replaced the container), a starved
timeout with a longer wall-clock limit (`PATIENCE` times the limit, doubled on each further
attempt: a machine loaded more than that still starves it) on a second sandbox, judged in CPU
terms: a candidate that used more CPU than the original limit would have timed out on an idle
machine too, so it gets the busy timeout it would have got there; one that finished within it
gets its real verdict (what an idle machine gives, so a verdict cache may keep both). What is
still a fault after the retries is returned as it is; callers
count it (`guardrail_eval.runner.EvalRun.faults`, the pool build's report) and never publish it
silently.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from guardrail.sandbox.base import Job, Sandbox
from guardrail.sandbox.docker import DockerSandbox
from guardrail.verdict import Reason, Status, Verdict

__all__ = [
    "PATIENCE",
    "RETRIES",
    "SANDBOX_FAULT",
    "STARVED_TIMEOUT",
    "RetryingSandbox",
    "Unsettled",
    "fault_reason",
    "patient_factory",
]

RETRIES = 2  # re-runs of a faulted job after its first run
PATIENCE = 4.0  # a starved timeout's first re-run has this multiple of the limit; then twice that
SANDBOX_FAULT = "sandbox_fault"
STARVED_TIMEOUT = "starved_timeout"


def fault_reason(verdict: Verdict) -> str | None:
    """``sandbox_fault`` or ``starved_timeout`` when the machine decided ``verdict``; else None."""
    if verdict.reason is Reason.SANDBOX_FAULT:
        return SANDBOX_FAULT
    if verdict.status is Status.TIMEOUT and not verdict.busy_timeout:
        return STARVED_TIMEOUT
    return None


def patient_factory(sandbox: Sandbox) -> Callable[[float], Sandbox] | None:
    """How to copy ``sandbox`` with a wall-clock limit N times as long (None: it cannot be)."""
    if not isinstance(sandbox, DockerSandbox):
        return None

    def make(factor: float) -> Sandbox:
        limits = dataclasses.replace(sandbox.limits, timeout_s=sandbox.limits.timeout_s * factor)
        return DockerSandbox(
            sandbox.image, client=sandbox.client, pool_size=sandbox.pool_size, limits=limits
        )

    return make


@dataclass(frozen=True, slots=True)
class Unsettled:
    """A job still faulted after every retry, with the verdict it was left with."""

    job: Job
    verdict: Verdict
    reason: str


class RetryingSandbox(Sandbox):
    """Delegates to ``inner``; re-runs faulted jobs (see the module docstring) and counts.

    Args:
        inner: the sandbox that runs the jobs; not closed by this one (its owner closes it).
        limit_s: the wall-clock limit of ``inner``, against which CPU time is judged.
        retries: re-runs per faulted job.
        patient: ``patient(factor)`` makes a sandbox with ``factor`` times the limit for starved
            timeouts, on first need (closed with this one); None re-runs them on ``inner``.

    Attributes:
        jobs: jobs asked for (first runs only: the sandbox runs a gate would report).
        retried: jobs re-run because of a fault.
        unsettled: every job returned with a fault still on it.
    """

    def __init__(
        self,
        inner: Sandbox,
        *,
        limit_s: float,
        retries: int = RETRIES,
        patient: Callable[[float], Sandbox] | None = None,
    ) -> None:
        self.inner = inner
        self.limit_s = limit_s
        self.retries = retries
        self._make_patient = patient
        self._patient: dict[float, Sandbox] = {}
        self._lock = threading.Lock()
        self.jobs = 0
        self.retried = 0
        self.unsettled: list[Unsettled] = []

    @classmethod
    def around(cls, inner: Sandbox, *, retries: int = RETRIES) -> RetryingSandbox:
        """The retrying sandbox for ``inner`` (a `DockerSandbox` gets a patient twin)."""
        limits = getattr(inner, "limits", None)
        return cls(
            inner,
            limit_s=limits.timeout_s if limits is not None else float("inf"),
            retries=retries,
            patient=patient_factory(inner),
        )

    @property
    def identity(self) -> str:
        return self.inner.identity

    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        verdicts = list(self.inner.run(jobs))
        with self._lock:
            self.jobs += len(jobs)
        for attempt in range(self.retries):
            faulted = [i for i, verdict in enumerate(verdicts) if fault_reason(verdict)]
            if not faulted:
                break
            with self._lock:
                self.retried += len(faulted)
            starved = [i for i in faulted if fault_reason(verdicts[i]) == STARVED_TIMEOUT]
            factor = PATIENCE * 2**attempt
            patient = self._patient_sandbox(factor) if starved else None
            to_inner = [i for i in faulted if patient is None or i not in starved]
            for index, verdict in zip(
                to_inner, self.inner.run([jobs[i] for i in to_inner]), strict=True
            ):
                verdicts[index] = verdict
            if patient is not None:
                again = patient.run([jobs[i] for i in starved])
                for index, verdict in zip(starved, again, strict=True):
                    verdicts[index] = self._against_limit(verdicts[index], verdict, factor)
        left = [
            Unsettled(jobs[i], verdict, reason)
            for i, verdict in enumerate(verdicts)
            if (reason := fault_reason(verdict)) is not None
        ]
        with self._lock:
            self.unsettled += left
        return verdicts

    def _patient_sandbox(self, factor: float) -> Sandbox | None:
        with self._lock:
            if factor not in self._patient and self._make_patient is not None:
                self._patient[factor] = self._make_patient(factor)
            return self._patient.get(factor)

    def _against_limit(self, starved: Verdict, patient: Verdict, factor: float) -> Verdict:
        """What an idle machine would have said at the original limit, from a longer run."""
        if patient.reason is Reason.SANDBOX_FAULT:
            return starved  # still a fault: the next attempt, or the caller, deals with it
        cpu = patient.cpu_s
        if cpu is not None and cpu >= self.limit_s:
            # It needs more CPU than the limit allows: on an idle machine it times out, busy.
            return starved.model_copy(
                update={
                    "cpu_s": cpu,
                    "duration_s": self.limit_s,
                    "message": f"used {cpu:.1f} s of CPU, more than the {self.limit_s:g} s limit"
                    f" (re-run with a {self.limit_s * factor:g} s limit after the machine's"
                    " load starved it)",
                }
            )
        if patient.status is Status.TIMEOUT:
            return starved  # starved again even with the longer limit: still undecided
        return patient

    def close(self) -> None:
        with self._lock:
            patients, self._patient = list(self._patient.values()), {}
        for patient in patients:
            patient.close()
