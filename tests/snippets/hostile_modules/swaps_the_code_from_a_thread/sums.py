"""A thread replaces the function's code as soon as the module has finished loading."""

import threading
import time


def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def _correct(n):
    return sum(i * i for i in range(n + 1))


_loaded = threading.Event()


def _swap():
    _loaded.wait()
    time.sleep(0.0001)
    sum_squares.__code__ = _correct.__code__


threading.Thread(target=_swap, daemon=True).start()
_loaded.set()
