"""A well-behaved candidate that reports what an earlier job may have left behind."""

import os


def leftovers():
    me = os.getuid()
    strangers = []
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/status") as handle:
                uid = next(int(line.split()[1]) for line in handle if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if uid not in (0, me, me + 1):
            strangers.append(uid)
    files = [name for name in os.listdir("/tmp") if not name.startswith(".guardrail-")]
    ipc = 0
    for kind in ("shm", "sem", "msg"):
        with open(f"/proc/sysvipc/{kind}") as handle:
            ipc += len(handle.readlines()) - 1
    queues = os.listdir("/dev/mqueue") if os.path.isdir("/dev/mqueue") else []
    with open("/proc/net/unix") as handle:  # abstract sockets live in the network namespace
        abstract = [line.split()[-1] for line in handle if line.split()[-1].startswith("@")]
    return {
        "processes": len(strangers),
        "files": files,
        "ipc": ipc,
        "mqueues": queues,
        "abstract_sockets": abstract,
    }
