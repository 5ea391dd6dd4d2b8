"""A profile function adds one to n as the retrieved text starts running."""

import sys


def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def _profiler(frame, event, arg):
    if event == "call" and frame.f_code is sum_squares.__code__:
        frame.f_locals["n"] += 1  # written back to the frame when the profiler returns


sys.setprofile(_profiler)
