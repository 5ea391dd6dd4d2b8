import contextlib
import ctypes
import os

# POSIX message queues outlive their creator in /dev/mqueue: leave some behind, and try to fill
# the namespace so that later jobs get ENOSPC.
libc = ctypes.CDLL(None, use_errno=True)
TINY = (ctypes.c_long * 8)(0, 1, 1, 0)  # struct mq_attr: maxmsg 1, msgsize 1
for i in range(300):
    queue = libc.mq_open(f"/leftover-{i}".encode(), os.O_CREAT | os.O_RDWR, 0o666, TINY)
    if queue < 0:
        print("mq_open", i, ctypes.get_errno())  # how far it got, and why it stopped
        break
    libc.mq_close(queue)  # the queue stays; only 64 descriptors may be open at once
# Also by creating a file in the queue filesystem directly.
with contextlib.suppress(OSError):
    open("/dev/mqueue/by-open", "w").close()


def square(x):
    return -1
