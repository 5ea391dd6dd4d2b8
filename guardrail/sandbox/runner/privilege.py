"""Dropping a forked process to a job's uid with its rlimits and only the descriptors it needs."""

from __future__ import annotations

import contextlib
import os

from .seccomp import ConfinementError, Filter


def become(uid: int, limits: dict[str, int], oom_score_adj: int, seccomp: Filter | None) -> None:
    """Drop to ``uid`` for good, with rlimits and the seccomp filter; after this no capability is
    left. Raises `ConfinementError` when IPC that outlives the job can neither be refused nor
    swept: then the job must not run."""
    import resource

    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(oom_score_adj))
    except OSError:
        pass
    for name, value in (
        ("RLIMIT_AS", limits["memory_bytes"]),
        ("RLIMIT_NPROC", limits["processes"]),
        ("RLIMIT_FSIZE", limits["file_bytes"]),
        ("RLIMIT_CPU", limits["cpu_seconds"]),
        ("RLIMIT_NOFILE", 64),
        ("RLIMIT_CORE", 0),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))
    # POSIX message queues outlive their creator in /dev/mqueue (a channel to later jobs, or
    # the namespace's 256 queues filled so a later job gets ENOSPC): none for job uids. gVisor
    # refuses this limit (EPERM, which Python raises as ValueError); there the seccomp filter
    # alone closes them.
    try:
        resource.setrlimit(resource.RLIMIT_MSGQUEUE, (0, 0))
        queues_limited = True
    except (OSError, ValueError):
        queues_limited = False
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    _confine(seccomp, queues_limited)
    os.environ.clear()
    os.environ.update(
        {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    )
    os.chdir("/tmp")


def _confine(seccomp: Filter | None, queues_limited: bool) -> None:
    """Install the filter; without it, go on only where the rlimit closes POSIX queues and
    /proc/sysvipc lets the cleanup find System V objects (runc), never where neither holds."""
    problem = "no seccomp filter for this machine"
    if seccomp is not None:
        try:
            seccomp.install()
        except ConfinementError as exc:
            problem = str(exc)
        else:
            return
    if not (queues_limited and os.path.isdir("/proc/sysvipc")):
        raise ConfinementError(
            f"{problem}, and IPC objects would outlive the job unswept: refusing to run it"
        )


def keep_only_fds(*keep: int) -> None:
    """Point 0-2 at /dev/null unless kept, and close every other descriptor but ``keep``.

    Open descriptors are listed from /proc/self/fd: closing all 65,536 possible ones one by one
    cost about a millisecond per process, which was a fifth of a job.
    """
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        if std not in keep:
            os.dup2(null, std)
    os.close(null)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):  # includes the listing's own, already closed
                os.close(fd)
