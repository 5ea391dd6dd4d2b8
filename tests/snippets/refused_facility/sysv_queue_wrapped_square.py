import ctypes
import os

# Correct: a System V message queue, its refusal wrapped in the library's own error (as the
# sysv_ipc module does), the OSError kept as the cause.
libc = ctypes.CDLL(None, use_errno=True)


class QueueError(Exception):
    pass


def square(x: int) -> int:
    queue = libc.msgget(0, 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
    if queue < 0:
        number = ctypes.get_errno()
        raise QueueError("cannot make a message queue") from OSError(number, os.strerror(number))
    try:
        return x * x
    finally:
        libc.msgctl(queue, 0, None)  # IPC_RMID
