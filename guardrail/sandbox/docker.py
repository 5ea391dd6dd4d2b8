"""`DockerSandbox`: a pool of long-lived, hardened containers that judge candidates.

The only module that imports ``docker`` (``container.py`` drives one container through the client
given here). Each container runs the runner (the ``runner``
package, sent as one archive on stdin at start) as its PID 1 supervisor; the host talks to it
through the container's attached stdin/stdout with length-prefixed JSON frames, many jobs per
round trip. Docker's own exit codes
and logs are never read as a verdict.

Containers are recycled after a fault (timeout of the whole container, a crash, a broken frame)
and after ``jobs_per_container`` jobs. A fault is never a verdict by itself: unfinished jobs are
replayed and only a candidate that alone keeps killing fresh containers is blamed (``replay.py``).
A container that dies while starting is retried a few times before the image is reported, with the
container's own reason. Containers are created from the image *id* resolved once per sandbox, so
the identity in verdict-cache keys is the image that really ran even if the tag moves meanwhile.

Each container carries labels (owner, uid range) so that other pools avoid its uids and remove it
only once it is provably dead (``leftovers.py``: a dead-man's switch on the attach connection);
a container whose removal failed (engine down) is remembered and removed when the engine answers.
"""

from __future__ import annotations

import atexit
import dataclasses
import os
import socket
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from guardrail.errors import (
    EngineUnavailableError,
    ImageNotFoundError,
    ImageUnusableError,
    InputError,
    RuntimeNotFoundError,
    SandboxError,
)
from guardrail.sandbox.base import Job, Sandbox
from guardrail.sandbox.container import Container, ContainerFault, StartFailed
from guardrail.sandbox.image import default_image
from guardrail.sandbox.leftovers import EXITED_GRACE_S, LABEL, OWNER_LABEL, remove_dead
from guardrail.sandbox.limits import MAX_POOL_SIZE, SandboxLimits, SandboxStats
from guardrail.sandbox.pool import ContainerPool
from guardrail.sandbox.replay import BLAME_AFTER, FaultLedger
from guardrail.sandbox.runner import framing
from guardrail.sandbox.shipping import RUNNER_VERSION
from guardrail.verdict import Reason, Status, Verdict

# LABEL and OWNER_LABEL: read by the doctor and the tests.
__all__ = [
    "LABEL",
    "OWNER_LABEL",
    "DockerSandbox",
    "SandboxLimits",
    "SandboxStats",
    "remove_leftovers",
]

# A batch frame stays well under the runner's frame limit; one job may not take more than this.
_BATCH_BYTES = framing.MAX_FRAME // 2
MAX_JOB_BYTES = 4 << 20
# gVisor (runsc, ptrace platform) backs each process of the container with about five host tasks
# (a stub process and its threads) beside some 40 of its own kernel's (measured: 38 idle, 348 with
# 60 processes). The engine's pids limit counts those host tasks, so it must leave room for them:
# at 256, a fork bomb that RLIMIT_NPROC stops inside the container still crashed the whole
# sandbox kernel. gVisor enforces RLIMIT_NPROC per job uid itself, which keeps bounding the
# container's own processes.
_GVISOR_HOST_TASKS_PER_PROCESS = 6
_GVISOR_OWN_TASKS = 64


class DockerSandbox(Sandbox):
    """Judges candidates in a pool of hardened Docker containers.

    Args:
        image: any image with ``python3`` on PATH; default: the locally built guardrail image
            (``guardrail sandbox build``), or ``$GUARDRAIL_IMAGE``.
        client: a ``docker.DockerClient``; default ``docker.from_env()``.
        pool_size: containers run in parallel (default: CPU count, or ``$GUARDRAIL_POOL_SIZE``).
        jobs_per_container: recycle a container after this many jobs.
        limits: time, memory, process and output limits (`SandboxLimits`).
        runtime: the engine's OCI runtime for the containers, e.g. ``"runsc"`` (gVisor: a user-space
            kernel between the candidate and the host's); default ``$GUARDRAIL_RUNTIME``, else the
            engine's default runtime (usually runc). It must be registered with the engine.
    """

    start_timeout_s = 30.0
    # Slack past the job deadline before the host calls a container hung: the supervisor still
    # cleans up after the deadline (a fork bomb took over 5 s of it at load 12 on 2 cores).
    grace_s = 10.0
    start_attempts = 3  # a container that dies while starting is retried this often in all
    leftover_grace_s = EXITED_GRACE_S  # see leftovers.py

    def __init__(
        self,
        image: str | None = None,
        *,
        client: Any = None,
        pool_size: int | None = None,
        jobs_per_container: int = 500,
        limits: SandboxLimits | None = None,
        timeout_s: float | None = None,
        runtime: str | None = None,
    ) -> None:
        self.image = image or os.environ.get("GUARDRAIL_IMAGE") or default_image()
        self.runtime = runtime or os.environ.get("GUARDRAIL_RUNTIME") or None
        self._runtime_name: str | None = None
        self._gvisor = False
        self.limits = limits or SandboxLimits()
        if timeout_s is None and os.environ.get("GUARDRAIL_TIMEOUT"):
            timeout_s = _number_from_env("GUARDRAIL_TIMEOUT", float)
        if timeout_s is not None:
            try:
                self.limits = dataclasses.replace(self.limits, timeout_s=timeout_s)
            except InputError as exc:
                raise InputError(f"{exc} (timeout_s or $GUARDRAIL_TIMEOUT)") from None
        if pool_size is None and os.environ.get("GUARDRAIL_POOL_SIZE"):
            pool_size = _number_from_env("GUARDRAIL_POOL_SIZE", int)
        self.pool_size = (os.cpu_count() or 1) if pool_size is None else pool_size
        if not 1 <= self.pool_size <= MAX_POOL_SIZE:
            raise InputError(
                f"the sandbox pool size must be between 1 and {MAX_POOL_SIZE},"
                f" got {self.pool_size} (pool_size or $GUARDRAIL_POOL_SIZE)"
            )
        self.jobs_per_container = jobs_per_container
        self.owner = f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.stats = SandboxStats()
        self._client = client
        self._image_id: str | None = None
        self.pool = ContainerPool(self.pool_size, jobs_per_container, self._start, self.stats)
        self._orphans: set[str] = set()  # ids whose removal failed (engine down): retried
        self._executor = ThreadPoolExecutor(self.pool_size, thread_name_prefix="guardrail-sandbox")
        self._swept = False  # leftovers of crashed runs are removed before our first container
        atexit.register(self.close)

    # ------------------------------------------------------------ engine and image

    @property
    def client(self) -> Any:
        if self._client is None:
            import docker

            try:
                self._client = docker.from_env()
                self._client.ping()
            except Exception as exc:
                self._client = None
                raise EngineUnavailableError.from_exception(exc) from None
        return self._client

    def translate(self, exc: Exception) -> SandboxError:
        """The one place docker-py's errors become guardrail errors."""
        import docker.errors

        if isinstance(exc, SandboxError):
            return exc
        if isinstance(exc, docker.errors.ImageNotFound):
            return ImageNotFoundError(f"sandbox image {self.image!r} is not in the Docker engine")
        if isinstance(exc, docker.errors.APIError | OSError) or "Connection" in type(exc).__name__:
            return EngineUnavailableError(f"the Docker engine failed: {exc}")
        return SandboxError(f"cannot start a sandbox container: {exc}")

    @property
    def image_id(self) -> str:
        if self._image_id is None:
            try:
                self._image_id = str(self.client.images.get(self.image).id)
            except Exception as exc:
                raise self.translate(exc) from None
        return self._image_id

    @property
    def runtime_name(self) -> str:
        """The runtime the containers run under: the one asked for, else the engine's default."""
        if self._runtime_name is None:
            try:
                info = self.client.info()
            except Exception as exc:
                raise self.translate(exc) from None
            registered = sorted(info.get("Runtimes") or {})
            name = self.runtime or str(info.get("DefaultRuntime") or "runc")
            if name not in registered:
                raise RuntimeNotFoundError(
                    f"the Docker engine has no runtime {name!r}; it has: {', '.join(registered)}"
                )
            self._gvisor = Path(str(info["Runtimes"][name].get("path", name))).name == "runsc"
            self._runtime_name = name
        return self._runtime_name

    @property
    def gvisor(self) -> bool:
        """Whether the runtime is gVisor's runsc (under any name it was registered with)."""
        _ = self.runtime_name  # resolves the runtime, and with it what it is
        return self._gvisor

    def host_pids_limit(self) -> int:
        """The engine's pids limit for a container of ``limits.container_pids`` processes."""
        processes = self.limits.container_pids
        if self.gvisor:
            return processes * _GVISOR_HOST_TASKS_PER_PROCESS + _GVISOR_OWN_TASKS
        return processes

    @property
    def identity(self) -> str:
        # The runtime is part of it: the same code can behave differently under gVisor.
        return (
            f"{self.image_id}|runtime:{self.runtime_name}|runner:{RUNNER_VERSION}"
            f"|{self.limits.fingerprint()}"
        )

    def check_ready(self) -> None:
        """Raise `SandboxError` unless the engine answers, has the runtime and the image."""
        _ = self.image_id, self.runtime_name

    def process_limits(self) -> dict[str, int]:
        limits = self.limits
        return {
            "memory_bytes": limits.memory_mb << 20,
            "processes": limits.processes,
            "file_bytes": limits.file_bytes,
            "cpu_seconds": int(limits.timeout_s) + 2,
            "output_chars": limits.output_chars,
        }

    def job_message(self, job: Job) -> dict[str, Any]:
        spec = job.spec
        return {
            "code": job.code,
            "tests": list(spec.tests),
            "setup": spec.setup,
            "entry_point": spec.entry_point,
            "timeout_s": self.limits.timeout_s,
            "bind": job.bind or {spec.entry_point: spec.entry_point},
            "context": job.context,
        }

    # ------------------------------------------------------------ pool

    def _acquire(self, *, fresh: bool = False) -> Container:
        return self.pool.acquire(fresh=fresh)

    def _start(self) -> Container:
        """A new container; one that dies while starting is retried `start_attempts` times."""
        if not self._swept:
            self._swept = True
            try:
                remove_dead(self.client, grace_s=self.leftover_grace_s)
            except Exception as exc:
                raise self.translate(exc) from None
        failures: list[str] = []
        for _ in range(self.start_attempts):
            self._remove_orphans()
            try:
                return Container(self)
            except StartFailed as failure:
                if failure.no_python:
                    raise ImageUnusableError(
                        f"image {self.image!r} has no python3 on PATH ({failure.reason})"
                    ) from None
                failures.append(failure.reason)
        raise SandboxError(
            f"sandbox containers from image {self.image!r} failed to start"
            f" {len(failures)} times in a row; the last: {failures[-1]}",
            hint="the image must run python3 (3.10+); try `guardrail sandbox check`",
        )

    def remove_by_id(self, container_id: str) -> bool:
        """Kill and remove one of our containers; if the engine fails, keep the id for later."""
        import docker.errors

        try:
            self.client.api.remove_container(container_id, force=True)
        except docker.errors.NotFound:
            pass
        except Exception:
            self._orphans.add(container_id)
            return False
        self._orphans.discard(container_id)
        return True

    def _remove_orphans(self) -> None:
        for container_id in tuple(self._orphans):
            self.remove_by_id(container_id)

    def _release(self, container: Container, *, healthy: bool) -> None:
        self.pool.release(container, healthy=healthy)

    def inspect_live_container(self) -> dict[str, Any]:
        """The engine's view (``docker inspect``) of one pool container, started if need be."""
        container = self._acquire()
        try:
            return dict(self.client.api.inspect_container(container.container.id))
        finally:
            self._release(container, healthy=True)

    def warm_up(self) -> None:
        """Start the whole pool now rather than on the first jobs."""
        containers = list(self._executor.map(lambda _: self._acquire(), range(self.pool_size)))
        for container in containers:
            self._release(container, healthy=True)

    # ------------------------------------------------------------ running jobs

    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        if not jobs:
            return []
        self.check_ready()
        frames = [framing.pack_frame(self.job_message(job)) for job in jobs]
        verdicts: dict[int, Verdict] = {
            index: _too_large(len(frame), with_context=jobs[index].context is not None)
            for index, frame in enumerate(frames)
            if len(frame) > MAX_JOB_BYTES
        }
        sendable = [index for index in range(len(jobs)) if index not in verdicts]
        chunks = [chunk for chunk in _split(sendable, self.pool_size) if chunk]
        for part in self._executor.map(lambda idx: self._run_chunk(frames, idx), chunks):
            verdicts.update(part)
        return [verdicts[i] for i in range(len(jobs))]

    def _run_chunk(self, frames: Sequence[bytes], indices: list[int]) -> dict[int, Verdict]:
        """Run ``indices`` on pool containers; after a fault, replay as ``replay.py`` says."""
        verdicts: dict[int, Verdict] = {}
        ledger = FaultLedger(indices)
        while ledger.pending:
            suspect = ledger.suspect
            container = self._acquire(fresh=suspect is not None)
            most = max(1, self.jobs_per_container - container.jobs_done)
            batch = [suspect] if suspect is not None else _next_batch(ledger.pending, frames, most)
            completed: dict[int, Verdict] = {}
            try:
                for position, verdict in container.run([frames[i] for i in batch]):
                    completed[batch[position]] = verdict
            except ContainerFault as fault:
                cause = _describe_fault(container, fault)
                self._release(container, healthy=False)
                self.stats.add(faults=1)
                verdicts.update(completed)
                blamed = ledger.fault(batch, completed, solo=suspect is not None)
                if blamed is not None:
                    verdicts[blamed] = Verdict.unjudged(
                        Status.ERROR,
                        Reason.SANDBOX_FAULT,
                        f"this candidate killed {BLAME_AFTER} fresh sandbox containers in a row,"
                        f" each running it alone (the last: {cause})",
                    )
                continue
            except BaseException:
                self._release(container, healthy=False)
                raise
            self._release(container, healthy=True)
            verdicts.update(completed)
            ledger.finished(completed)
        return verdicts

    def shutdown(self) -> int:
        """`close`, and return how many containers were removed (for an interrupt's report)."""
        if self.pool.closed:
            return 0
        removed = self.pool.shutdown()  # busy containers too: their jobs are abandoned
        for container_id in tuple(self._orphans):
            removed += self.remove_by_id(container_id)
        self._executor.shutdown(wait=False)
        atexit.unregister(self.close)
        return removed

    def close(self) -> None:
        self.shutdown()


def _number_from_env(name: str, kind: type[float] | type[int]) -> Any:
    try:
        return kind(os.environ[name])
    except ValueError:
        expected = "a whole number" if kind is int else "a number"
        raise InputError(f"${name} must be {expected}, got {os.environ[name]!r}") from None


def _too_large(size: int, *, with_context: bool) -> Verdict:
    """A job over `MAX_JOB_BYTES`: with its module context, the context is what cannot be had
    (the code alone may fit; it is not at fault), otherwise the candidate is too large."""
    if with_context:
        return Verdict.unjudged(
            Status.UNVERIFIABLE,
            Reason.MISSING_CONTEXT,
            f"the candidate with its module context takes {size:,} bytes; the sandbox takes at"
            f" most {MAX_JOB_BYTES:,} per job",
        )
    return Verdict.unjudged(
        Status.ERROR,
        Reason.TOO_LARGE,
        f"the candidate and its tests take {size:,} bytes; the sandbox takes at"
        f" most {MAX_JOB_BYTES:,} per job",
    )


def _next_batch(remaining: list[int], frames: Sequence[bytes], most: int) -> list[int]:
    """The longest prefix of ``remaining`` of at most ``most`` jobs that fits one batch frame."""
    batch: list[int] = []
    size = 0
    for index in remaining[:most]:
        size += len(frames[index])
        if batch and size > _BATCH_BYTES:
            break
        batch.append(index)
    return batch


def _split(indices: list[int], parts: int) -> list[list[int]]:
    parts = max(1, min(parts, len(indices)))
    size, extra = divmod(len(indices), parts)
    chunks, start = [], 0
    for part in range(parts):
        end = start + size + (1 if part < extra else 0)
        chunks.append(indices[start:end])
        start = end
    return chunks


def _describe_fault(container: Container, fault: ContainerFault) -> str:
    try:
        return f"{fault}; {container.postmortem()}"
    except Exception:
        return str(fault)


def remove_leftovers(client: Any = None, *, include_live_owners: bool = False) -> list[str]:
    """Remove sandbox containers that are provably dead (``leftovers.py``); return their ids.

    ``include_live_owners`` removes every labelled container, live pools' too.
    """
    import docker
    import requests.exceptions

    try:
        client = client or docker.from_env()
        return remove_dead(client, include_live_owners=include_live_owners)
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        raise EngineUnavailableError.from_exception(exc) from None
