import ctypes
import time

# Names itself so that the test's watcher (tests/test_sandbox_faults.py) kills the container it
# runs in, every time: a stand-in for a candidate that reliably kills its container. The runner
# leaves candidates no way to do that themselves (memory, processes and System V objects are all
# bounded or reaped; the OOM killer prefers the candidate), so the kill comes from outside.
PR_SET_NAME = 15
ctypes.CDLL(None).prctl(PR_SET_NAME, b"gr-kill-my-box", 0, 0, 0)
time.sleep(30)


def square(x: int) -> int:
    return x * x
