import ctypes
import os

# Correct, but its module makes its queue at import: the load itself meets the refusal.
libc = ctypes.CDLL(None, use_errno=True)
QUEUE = libc.mq_open(b"/square-at-import", os.O_CREAT | os.O_RDWR, 0o600, None)
if QUEUE < 0:
    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))


def square(x: int) -> int:
    return x * x
