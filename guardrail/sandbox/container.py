"""One running sandbox container, and the stream the host talks to its supervisor through.

`DockerSandbox` (``docker.py``) owns the pool and decides what a fault means; this module only
creates a hardened container, sends it the runner and its configuration, exchanges frames with
the supervisor (Docker's multiplexed attach stream, length-prefixed JSON inside) and says why a
container that failed to start ended. A container that stops answering, closes its stream or
breaks the protocol raises `ContainerFault`; one that dies while starting raises `StartFailed`.
"""

from __future__ import annotations

import contextlib
import json
import select
import socket
import struct
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any

from guardrail.errors import SandboxError
from guardrail.sandbox.autopsy import cause_of_death, has_python
from guardrail.sandbox.leftovers import LABEL, OWNER_LABEL
from guardrail.sandbox.runner import framing
from guardrail.sandbox.shipping import (
    BOOTSTRAP,
    INTERPRETER_FLAGS,
    RUNNER_ARCHIVE,
    RUNNER_VERSION,
)
from guardrail.sandbox.uids import RANGES, UID_BASE_LABEL, UID_SPAN_LABEL, live_ranges, uid_span
from guardrail.verdict import Reason, Status, TestOutcome, Verdict

if TYPE_CHECKING:
    from guardrail.sandbox.docker import DockerSandbox

__all__ = ["FRAME_HEADER", "Container", "ContainerFault", "StartFailed"]

_DOCKER_HEADER = struct.Struct(">BxxxI")
FRAME_HEADER = 4  # runner frames: 4-byte big-endian length, then JSON


class ContainerFault(Exception):  # noqa: N818 - a fault, not an error of the caller
    """The container stopped answering or broke the protocol; it is discarded."""

    def __init__(self, message: str, completed: dict[int, Verdict]) -> None:
        super().__init__(message)
        self.completed = completed


class StartFailed(Exception):  # noqa: N818 - a failed attempt, retried by the pool
    """A container died or hung while starting; ``reason`` is its own account of why."""

    def __init__(self, reason: str, *, no_python: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.no_python = no_python


class Container:
    """One running sandbox container and its attached stdin/stdout stream."""

    def __init__(self, sandbox: DockerSandbox) -> None:
        self.sandbox = sandbox
        self.jobs_done = 0
        self.buffer = b""
        self.diagnostics = b""
        client = sandbox.client
        limits = sandbox.limits
        image_id = sandbox.image_id  # an id, never the tag: the identity is what really runs
        span = uid_span(sandbox.jobs_per_container)
        try:
            self.uid_base = RANGES.allocate(span, live_ranges(client))
            # docker-py creates attached containers with StdinOnce: when our connection goes
            # away the supervisor reads EOF and exits (the dead-man's switch of leftovers.py).
            self.container = client.containers.create(
                image_id,
                ["python3", *INTERPRETER_FLAGS, "-c", BOOTSTRAP],
                entrypoint=[""],  # a user's image may have one: nothing runs before the runner
                runtime=sandbox.runtime_name,
                stdin_open=True,
                network_mode="none",
                read_only=True,
                tmpfs={"/tmp": f"rw,nosuid,nodev,noexec,size={limits.tmpfs_mb}m,mode=1777"},
                ipc_mode="none",  # no /dev/shm either
                cap_drop=["ALL"],
                cap_add=["SETUID", "SETGID", "KILL"],
                security_opt=["no-new-privileges"],
                pids_limit=sandbox.host_pids_limit(),
                mem_limit=f"{limits.container_memory_mb}m",
                memswap_limit=f"{limits.container_memory_mb}m",
                nano_cpus=int(limits.cpus * 1e9),
                log_config={"type": "none", "config": {}},
                labels={
                    LABEL: RUNNER_VERSION,
                    OWNER_LABEL: sandbox.owner,
                    UID_BASE_LABEL: str(self.uid_base),
                    UID_SPAN_LABEL: str(span),
                },
                environment={},
                hostname="sandbox",
                user="0:0",
                working_dir="/tmp",
            )
        except Exception as exc:
            raise sandbox.translate(exc) from None
        sandbox.pool.hold(self)
        try:
            stream = client.api.attach_socket(
                self.container.id, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1}
            )
            self.socket: socket.socket = stream._sock
            self.socket.setblocking(True)
            self.container.start()
        except Exception as exc:
            failure = self.start_failure(f"the engine could not start it ({exc})")
            self.kill()
            raise failure from None
        sandbox.stats.add(containers_started=1)
        try:
            self.send_raw(b"%010d" % len(RUNNER_ARCHIVE) + RUNNER_ARCHIVE)
            self.send(
                {
                    "uid_base": self.uid_base,
                    "timeout_s": limits.timeout_s,
                    "limits": sandbox.process_limits(),
                }
            )
            hello = self.receive(time.monotonic() + sandbox.start_timeout_s)
        except ContainerFault as fault:
            failure = self.start_failure(f"its runner did not start ({fault})")
            self.kill()
            raise failure from None
        if not (isinstance(hello, dict) and hello.get("ready")):
            self.kill()
            raise SandboxError(f"sandbox runner sent an unexpected greeting: {hello!r}")

    def send_raw(self, data: bytes) -> None:
        try:
            self.socket.sendall(data)
        except OSError as exc:
            raise ContainerFault(f"cannot write to the container: {exc}", {}) from None

    def send(self, message: object) -> None:
        self.send_raw(framing.pack_frame(message))

    def receive(self, deadline: float) -> Any:
        """The next frame from the supervisor; `ContainerFault` past ``deadline`` or on EOF."""
        while True:
            if len(self.buffer) >= 4:
                size = int.from_bytes(self.buffer[:4], "big")
                if size > framing.MAX_FRAME:
                    raise ContainerFault("oversized frame from the supervisor", {})
                if len(self.buffer) >= 4 + size:
                    payload, self.buffer = self.buffer[4 : 4 + size], self.buffer[4 + size :]
                    return json.loads(payload)
            self._read_docker_frame(deadline)

    def _read_docker_frame(self, deadline: float) -> None:
        header = self._read_exact(_DOCKER_HEADER.size, deadline)
        kind, size = _DOCKER_HEADER.unpack(header)
        data = self._read_exact(size, deadline)
        if kind == 1:
            self.buffer += data
        else:  # the supervisor's own stderr: keep the tail for error messages
            self.diagnostics = (self.diagnostics + data)[-4096:]

    def _read_exact(self, size: int, deadline: float) -> bytes:
        chunks = []
        while size:
            left = deadline - time.monotonic()
            try:
                if left <= 0 or not select.select([self.socket], [], [], left)[0]:
                    raise ContainerFault("the container stopped answering", {})
                chunk = self.socket.recv(min(size, 1 << 20))
            except (OSError, ValueError) as exc:  # the stream was closed under us
                raise ContainerFault(f"the container's stream broke: {exc}", {}) from None
            if not chunk:
                raise ContainerFault("the container closed its stream", {})
            chunks.append(chunk)
            size -= len(chunk)
        return b"".join(chunks)

    def run(self, frames: Sequence[bytes]) -> Iterator[tuple[int, Verdict]]:
        """Send encoded jobs in one frame; yield verdicts as the supervisor streams them back."""
        sandbox = self.sandbox
        body = b'{"jobs":[' + b",".join(frame[FRAME_HEADER:] for frame in frames) + b"]}"
        self.send_raw(len(body).to_bytes(FRAME_HEADER, "big") + body)
        for _ in frames:
            # A healthy supervisor always answers within the job's own deadline plus slack.
            deadline = time.monotonic() + sandbox.limits.timeout_s + sandbox.grace_s
            message = self.receive(deadline)
            try:
                index = int(message["job"])
                verdict = _verdict_from_report(message["report"])
            except (KeyError, TypeError, ValueError) as exc:
                raise ContainerFault(f"malformed report from the supervisor: {exc}", {}) from None
            self.jobs_done += 1
            sandbox.stats.add(jobs_run=1)
            yield index, verdict

    def start_failure(self, what: str) -> Exception:
        """Why this container failed to start, from the engine's view; an engine error if the
        engine itself is what failed."""
        try:
            cause = self.postmortem()
            no_python = not has_python(self.sandbox.client, self.container.id)
        except Exception as exc:
            return self.sandbox.translate(exc)
        return StartFailed(f"{what}; {cause}", no_python=no_python)

    def postmortem(self) -> str:
        """The container's own account of how it ended (``autopsy.py``)."""
        return cause_of_death(self.sandbox.client, self.container.id, self.diagnostics)

    def kill(self) -> bool:
        """Kill and remove by id (closing the client alone would leave it running).

        If the engine cannot remove it now (an outage), the sandbox keeps its id and removes it
        once the engine answers again, so an outage leaks no container.
        """
        with contextlib.suppress(Exception):
            self.socket.close()
        self.sandbox.pool.forget(self)
        container = getattr(self, "container", None)
        return container is not None and self.sandbox.remove_by_id(container.id)


def _verdict_from_report(report: dict[str, Any]) -> Verdict:
    reason = Reason(report["reason"])
    message = str(report.get("message", ""))
    if reason is Reason.MISSING_DEPENDENCY:
        # Imported here: extend.py builds on docker.py, which imports this module.
        from guardrail.sandbox.extend import dependency_hint

        message = f"{message[:2000]}; {dependency_hint(message)}"
    return Verdict(
        status=Status(report["status"]),
        reason=reason,
        message=message,
        tests=tuple(TestOutcome(**test) for test in report.get("tests", [])),
        alias=report.get("alias"),
        duration_s=float(report.get("duration_s", 0.0)),
        cpu_s=report.get("cpu_s"),
        stdout=str(report.get("stdout", "")),
        stderr=str(report.get("stderr", "")),
    )
