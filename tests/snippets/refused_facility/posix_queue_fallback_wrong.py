import ctypes
import os

# Wrong: it handles the refusal and falls back to a wrong answer, which is judged as such.
libc = ctypes.CDLL(None, use_errno=True)


def square(x: int) -> int:
    queue = libc.mq_open(b"/square-fallback", os.O_CREAT | os.O_RDWR, 0o600, None)
    if queue < 0:
        return x + x
    libc.mq_close(queue)
    libc.mq_unlink(b"/square-fallback")
    return x * x
