"""After a job: leave nothing of its uids behind (processes, files, IPC objects)."""

from __future__ import annotations

import ctypes
import os
import signal

from .erase import remove_owned


def processes_of(uid: int) -> tuple[int, int]:
    """How many processes run under ``uid``: (alive, zombies waiting to be reaped)."""
    alive = zombies = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields: dict[str, str] = {}
        try:
            with open(f"/proc/{entry}/status") as handle:
                for line in handle:
                    key, _, value = line.partition(":")
                    if key in ("State", "Uid"):
                        fields[key] = value.split()[0]
        except (OSError, IndexError):
            continue
        if fields.get("Uid") == str(uid):
            if fields.get("State") == "Z":
                zombies += 1
            else:
                alive += 1
    return alive, zombies


# /proc/sysvipc/<kind>: the id, owner uid and creator uid columns of each kind of object.
_SYSV_COLUMNS = {"shm": (1, 7, 9), "sem": (1, 4, 6), "msg": (1, 7, 9)}


def ipc_objects_of(uid: int) -> list[tuple[str, int]]:
    """System V shared memory, semaphores and queues owned or created by ``uid``.

    They outlive their creator inside the container's IPC namespace, so a job could otherwise
    leave memory charged to the container or data for a later job.
    """
    found = []
    for kind, (ident, owner, creator) in _SYSV_COLUMNS.items():
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                rows = [line.split() for line in handle.readlines()[1:]]
        except OSError:
            continue
        found += [(kind, int(row[ident])) for row in rows if str(uid) in (row[owner], row[creator])]
    return found


def _remove_ipc_objects(uid: int) -> None:
    """As their owner or creator: IPC_RMID (0) on every System V object of ``uid``."""

    libc = ctypes.CDLL(None)
    remove = {
        "shm": lambda ident: libc.shmctl(ident, 0, None),
        "sem": lambda ident: libc.semctl(ident, 0, 0),
        "msg": lambda ident: libc.msgctl(ident, 0, None),
    }
    for kind, ident in ipc_objects_of(uid):
        remove[kind](ident)


# Every place a job uid can write (`sandbox check` proves there is no other): files, FIFOs,
# sockets and directories in /tmp, POSIX queues in /dev/mqueue; /dev/shm exists only when the
# engine ignores ``ipc_mode="none"``.
WRITABLE = ("/tmp", "/dev/shm", "/dev/mqueue")


def owned_files(uid: int) -> bool:
    for folder in WRITABLE:
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            try:
                if os.lstat(os.path.join(folder, name)).st_uid == uid:
                    return True
            except OSError:
                continue
    return False


_PR_SET_DUMPABLE = 4


def reap_as(uid: int) -> None:
    """As ``uid``: SIGKILL all it runs (``kill(-1)`` spares only the caller), delete its files
    and its System V IPC objects."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            # The reaper was forked from the supervisor, whose memory holds every job of the
            # batch, and now shares the job's uid: never let a process of that uid read it.
            ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
            for _ in range(100):
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    break
            for folder in WRITABLE:
                remove_owned(folder, uid)
            _remove_ipc_objects(uid)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)
