import ctypes
import os

# Correct: passes its result through a POSIX message queue of its own, and raises the refusal.
libc = ctypes.CDLL(None, use_errno=True)


def square(x: int) -> int:
    name = f"/square-{os.getpid()}".encode()
    queue = libc.mq_open(name, os.O_CREAT | os.O_RDWR, 0o600, None)
    if queue < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    try:
        message = str(x * x).encode()
        libc.mq_send(queue, message, len(message), 0)
        buffer = ctypes.create_string_buffer(1 << 16)
        size = libc.mq_receive(queue, buffer, len(buffer), None)
        return int(buffer.raw[:size])
    finally:
        libc.mq_close(queue)
        libc.mq_unlink(name)
