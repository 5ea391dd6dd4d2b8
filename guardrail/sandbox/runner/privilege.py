"""Dropping a forked process to a job's uid with its rlimits and only the descriptors it needs."""

from __future__ import annotations

import contextlib
import os


def become(uid: int, limits: dict[str, int], oom_score_adj: int) -> None:
    """Drop to ``uid`` for good, with rlimits; after this no capability is left."""
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
        # POSIX message queues outlive their creator in /dev/mqueue (a channel to later jobs,
        # or the namespace's 256 queues filled so a later job gets ENOSPC): none for job uids.
        ("RLIMIT_MSGQUEUE", 0),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    os.environ.clear()
    os.environ.update(
        {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    )
    os.chdir("/tmp")


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
