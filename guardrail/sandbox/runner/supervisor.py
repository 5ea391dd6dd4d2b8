"""The supervisor (PID 1 in the container): reads batches from the host, runs each job in a
fresh candidate and judge, cleans up after it and streams the judge's reports back."""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import socket
import sys
import time
from typing import Any

from .cleanup import ipc_objects_of, owned_files, processes_of, reap_as
from .framing import (
    HEADER,
    PROTOCOL,
    ChannelClosed,
    pack_frame,
    read_exact,
    read_frame,
    write_frame,
)
from .judge import Judge, make_report
from .privilege import become, keep_only_fds
from .seccomp import ConfinementError, Filter
from .zygote import zygote_main


class Supervisor:
    def __init__(
        self,
        config: dict[str, Any],
        zygote: socket.socket,
        zygote_pid: int,
        seccomp: Filter | None,
    ) -> None:
        self.config = config
        self.seccomp = seccomp
        self.zygote = zygote
        self.zygote_pid = zygote_pid
        self.serial = 0

    def run_job(self, job: dict[str, Any]) -> dict[str, Any]:
        started = time.monotonic()
        timeout = float(job.get("timeout_s", self.config["timeout_s"]))
        deadline = started + timeout
        self.serial += 1
        candidate_uid = self.config["uid_base"] + 2 * self.serial
        judge_uid = candidate_uid + 1
        limits = self.config["limits"]
        judge_end, candidate_end = socket.socketpair()
        outputs = [
            _private_file(f"/tmp/.guardrail-{name}-{self.serial}") for name in ("out", "err")
        ]
        # Only the uid: nothing of the job may enter the process that forks later candidates.
        socket.send_fds(
            self.zygote, [HEADER.pack(candidate_uid)], [candidate_end.fileno(), *outputs]
        )
        candidate_end.close()  # the zygote holds its own reference since the send
        _hand_over_code(judge_end, job, deadline)
        report_r, report_w = os.pipe()
        judge_pid = os.fork()
        if judge_pid == 0:
            self._judge(job, judge_uid, judge_end.fileno(), report_w, deadline)
        os.close(report_w)
        judge_end.close()
        # Read only now, so that the zygote's fork and the judge's fork overlap.
        (candidate_pid,) = HEADER.unpack(read_exact(self.zygote.fileno(), HEADER.size))
        candidate_gone = _exit_watch(candidate_pid)
        try:
            report: dict[str, Any] = read_frame(report_r, deadline + 1.0)
        except TimeoutError:
            report = make_report("timeout", "timeout", "the job ran past its time limit")
        except (ChannelClosed, ValueError, OSError):
            report = make_report("error", "sandbox_fault", "the judge ended without a report")
        os.close(report_r)
        report["cpu_s"] = _cpu_seconds(candidate_pid)  # read before the kill: it tells a
        for pid in (candidate_pid, judge_pid):  # busy loop from a starved process
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        os.waitpid(judge_pid, 0)
        if candidate_gone is not None:  # wake the moment the candidate is gone, not by polling
            select.select([candidate_gone], [], [], 0.1)
            os.close(candidate_gone)
        timed_out = report["status"] == "timeout"  # what outlives a deadline is rarely one process
        self._cleanup(candidate_uid, timed_out)
        self._cleanup(judge_uid, timed_out)
        report["stdout"], report["stderr"] = (
            _read_output(fd, limits["output_chars"]) for fd in outputs
        )
        for fd in outputs:
            os.close(fd)
        report["duration_s"] = round(time.monotonic() - started, 6)
        return report

    def _judge(
        self, job: dict[str, Any], uid: int, channel: int, report_w: int, deadline: float
    ) -> None:
        """In the forked judge: confine, judge, write the report, exit."""
        try:
            keep_only_fds(channel, report_w)
            try:
                become(uid, self.config["limits"], 500, self.seccomp)
            except ConfinementError as exc:  # the job must not run unconfined
                report = make_report("error", "sandbox_fault", str(exc))
            else:
                report = Judge(channel, deadline).run(job)
            write_frame(report_w, report)
        finally:
            os._exit(0)

    def _cleanup(self, uid: int, timed_out: bool) -> None:
        """Leave nothing of ``uid`` behind: no process (not even a zombie), no file."""
        for attempt in range(2000):
            self._reap_orphans()
            alive, zombies = processes_of(uid)
            if alive or zombies:
                # The job's own process (one per uid) was SIGKILLed already and vanishes within a
                # few polls; only what survives that (a fork bomb, a setsid daemon) needs the
                # reaper. More than one, or a job that timed out, needs it at once: each poll
                # lists /proc, which under gVisor with a fork bomb's thousands of processes
                # costs so much that ten of them outlast the host's deadline.
                # A zombie counts too: a process whose main thread exited shows as one while
                # its other threads run on, and only the reaper's kill(-1) ends those.
                if timed_out or alive + zombies > 1 or attempt >= 10:
                    reap_as(uid)
                else:
                    time.sleep(0.0005)
                continue
            # Looked for only once the processes are gone: nothing can add files after that.
            if not (owned_files(uid) or ipc_objects_of(uid)):
                return
            reap_as(uid)
        raise SystemExit(f"could not clean up after uid {uid}")  # the host recycles us

    def _reap_orphans(self) -> None:
        while True:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.zygote_pid:
                raise SystemExit("the zygote died")


def _hand_over_code(channel: socket.socket, job: dict[str, Any], deadline: float) -> None:
    """Write the candidate's code (with its module context and the host's binding plan, if any)
    as the first frame of its channel, straight into the socket:
    the candidate loads it while the judge starts, and it never passes through the zygote.

    Bounded by the job's deadline (a large frame waits for the candidate to read). If it cannot
    be written, the judge's wait for the candidate's greeting reports what became of it.
    """
    channel.settimeout(max(0.001, deadline - time.monotonic()))
    try:
        keys = ("code", "entry_point", "context", "bind")
        channel.sendall(pack_frame({key: job.get(key) for key in keys}))
    except OSError:  # TimeoutError included
        pass
    finally:
        channel.settimeout(None)  # blocking again before the judge inherits it


def _exit_watch(pid: int) -> int | None:
    """A pidfd that becomes readable when ``pid`` exits (None if it is gone already)."""
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of ``pid`` so far (``/proc/<pid>/stat`` is world-readable)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    # Fields after the command name: state is index 0, utime 11, stime 12 (proc(5) 3, 14, 15).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _private_file(path: str) -> int:
    """A file only this process can open (root, 0600), unlinked at once; its fd is passed on."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.unlink(path)
    return fd


def _read_output(fd: int, limit: int) -> str:
    data = os.pread(fd, limit * 4 + 4, 0)
    text = data.decode("utf-8", "replace")
    if len(text) > limit or os.fstat(fd).st_size > len(data):
        return text[:limit] + "\n[... output truncated]"
    return text


def _seccomp_filter() -> Filter | None:
    """Built once, before any fork: each job process then only installs it (`privilege`)."""
    try:
        return Filter()
    except ConfinementError:
        return None  # an unknown machine: `privilege.become` decides whether jobs may run


def supervisor_main() -> None:
    """Entry point inside the container: read a config frame, fork the zygote, serve batches."""
    os.umask(0o077)
    stdin, stdout = sys.stdin.fileno(), os.dup(sys.stdout.fileno())
    config = read_frame(stdin)
    seccomp = _seccomp_filter()
    parent_end, zygote_end = socket.socketpair()
    zygote_pid = os.fork()
    if zygote_pid == 0:
        parent_end.close()
        keep_only_fds(zygote_end.fileno())
        zygote_main(zygote_end, config["limits"], seccomp)
        os._exit(0)
    zygote_end.close()
    # Nothing this process starts may inherit the channel to the host.
    os.set_inheritable(stdout, False)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    supervisor = Supervisor(config, parent_end, zygote_pid, seccomp)
    gc.freeze()  # the judges it forks then collect only their own objects (see `zygote`)
    write_frame(stdout, {"ready": True, "protocol": PROTOCOL, "python": sys.version.split()[0]})
    while True:
        try:
            batch = read_frame(stdin)
        except ChannelClosed:
            return
        for index, job in enumerate(batch["jobs"]):
            write_frame(stdout, {"job": index, "report": supervisor.run_job(job)})
