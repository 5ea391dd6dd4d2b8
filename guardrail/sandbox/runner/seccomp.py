"""A seccomp-bpf filter for job processes: System V IPC, POSIX message queues and kernel keyrings
fail with an errno of the filter's own, one per facility (`REFUSED`).

Those objects outlive the process that made them, so they are channels from one job to a later
one (and to a later job's verdict, which is cached). Under runc the runner also finds and
removes them after each job; gVisor has no /proc/sysvipc and no /dev/mqueue to sweep, so there
refusing the calls is the only way. The filter is built once, in the supervisor before it forks
anything, so that each job process pays a single ``prctl`` for it.

A refused call fails with an errno no kernel call returns (Linux's own end below 150), one per
facility: ``OSError: [Errno 3002] Unknown error 3002`` for a POSIX queue. `refused_facility`
reads it back from an exception's description, so the judge can say that correct code met a
facility the sandbox refuses instead of calling it ``failed``. The errno is seen first in the
candidate's process, so a candidate can fake it; what it buys is an ``unverifiable`` verdict
(reason ``refused_facility``), never ``verified``: fail closed.
"""

from __future__ import annotations

import ctypes
import os
import platform
import re
import struct
from typing import Any

# Audit architecture of each machine the runner knows, and the numbers of the calls it refuses.
_X86_64 = 0xC000003E
_AARCH64 = 0xC00000B7
_X32_BIT = 0x40000000  # x86-64 calls with this bit are the x32 ABI: another table, refused
_X86_64_CALLS = {
    "shmget": 29, "shmat": 30, "shmctl": 31, "semget": 64, "semop": 65, "semtimedop": 220,
    "semctl": 66, "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71,
    "mq_open": 240, "mq_unlink": 241, "mq_timedsend": 242, "mq_timedreceive": 243,
    "mq_notify": 244, "mq_getsetattr": 245, "add_key": 248, "request_key": 249, "keyctl": 250,
}  # fmt: skip
_AARCH64_CALLS = {  # the generic table (asm-generic/unistd.h)
    "shmget": 194, "shmat": 196, "shmctl": 195, "semget": 190, "semop": 193, "semtimedop": 192,
    "semctl": 191, "msgget": 186, "msgsnd": 189, "msgrcv": 188, "msgctl": 187,
    "mq_open": 180, "mq_unlink": 181, "mq_timedsend": 182, "mq_timedreceive": 183,
    "mq_notify": 184, "mq_getsetattr": 185, "add_key": 217, "request_key": 218, "keyctl": 219,
}  # fmt: skip
TABLES = {"x86_64": (_X86_64, _X86_64_CALLS), "aarch64": (_AARCH64, _AARCH64_CALLS)}
# The errno each refused facility gets, and the facility's name in a verdict.
REFUSED = {
    3001: ("System V IPC (shmget, semget, msgget, ...)", ("shm", "sem", "msg")),
    3002: ("POSIX message queues (mq_open, ...)", ("mq_",)),
    3003: ("kernel keyrings (add_key, request_key, keyctl)", ("add_key", "request_key", "keyctl")),
}
_ERRNO_TEXT = re.compile(r"\[Errno (\d{4})\]|Unknown error (\d{4})")

# Classic BPF over struct seccomp_data {int nr; u32 arch; u64 ip; u64 args[6]}.
_LOAD_WORD = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JUMP_EQUAL = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JUMP_AT_LEAST = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RETURN = 0x06  # BPF_RET | BPF_K
_KILL_PROCESS = 0x80000000
_ERRNO = 0x00050000
_ALLOW = 0x7FFF0000
_PR_SET_NO_NEW_PRIVS = 38
_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2


class ConfinementError(Exception):
    """A job process could not be confined as the threat model requires: it must not run."""


def _instruction(code: int, k: int, true: int = 0, false: int = 0) -> bytes:
    return struct.pack("HBBI", code, true, false, k)


def program(machine: str) -> bytes:
    """The filter for ``machine`` (``platform.machine()``): any other architecture is killed."""
    try:
        arch, calls = TABLES[machine]
    except KeyError:
        raise ConfinementError(f"no seccomp table for machine {machine!r}") from None
    by_errno = {
        code: sorted(n for name, n in calls.items() if name.startswith(prefixes))
        for code, (_facility, prefixes) in REFUSED.items()
    }
    code = [
        _instruction(_LOAD_WORD, 4),  # arch
        _instruction(_JUMP_EQUAL, arch, true=1),
        _instruction(_RETURN, _KILL_PROCESS),
        _instruction(_LOAD_WORD, 0),  # nr
    ]
    if arch == _X86_64:
        code += [
            _instruction(_JUMP_AT_LEAST, _X32_BIT, false=1),
            _instruction(_RETURN, _KILL_PROCESS),
        ]
    # One list per facility: a match jumps over the rest of the lists and the ALLOW to its
    # facility's ERRNO return; the returns follow the ALLOW in the lists' order.
    numbers = [(n, i) for i, group in enumerate(by_errno.values()) for n in group]
    code += [
        _instruction(_JUMP_EQUAL, number, true=len(numbers) - index + group)
        for index, (number, group) in enumerate(numbers)
    ]
    code.append(_instruction(_RETURN, _ALLOW))
    code += [_instruction(_RETURN, _ERRNO | number) for number in by_errno]
    return b"".join(code)


def refused_detail(facility: str, message: str) -> str:
    """A refused facility, named for a verdict."""
    return f"the code uses {facility}, which the sandbox refuses (they outlive the job): {message}"


def refused_facility(description: Any) -> str | None:
    """The facility a refused call's errno names, in an exception's description
    (`exceptions.describe_exception`: its ``errnos``, or the errno's text in its message)."""
    if not isinstance(description, dict):
        return None
    numbers = description.get("errnos")
    found = [n for n in numbers if type(n) is int] if type(numbers) is list else []
    for match in _ERRNO_TEXT.finditer(str(description.get("message", ""))[:2000]):
        found.append(int(match.group(1) or match.group(2)))
    for number in found:
        if number in REFUSED:
            return REFUSED[number][0]
    return None


class _SockFprog(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.c_void_p))


class Filter:
    """The filter for this machine, ready to install: ``install`` is one ``prctl``."""

    def __init__(self) -> None:
        self._libc = ctypes.CDLL(None, use_errno=True)
        self._code = ctypes.create_string_buffer(program(platform.machine()))
        self._fprog = _SockFprog(len(self._code.raw) // 8, ctypes.addressof(self._code))

    def install(self) -> None:
        """Confine the calling process (and all it forks) for good; raise if the kernel says no.

        ``no_new_privs`` is set by the engine already; set again so that an unprivileged
        process may install a filter wherever the runner runs.
        """
        prctl = self._libc.prctl
        if prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or (
            prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._fprog), 0, 0) != 0
        ):
            number = ctypes.get_errno()
            raise ConfinementError(f"the kernel refused the seccomp filter: {os.strerror(number)}")
