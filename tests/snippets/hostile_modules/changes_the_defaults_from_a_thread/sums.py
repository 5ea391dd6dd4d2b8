"""A thread changes the function's defaults once the module has finished loading."""

import threading


def sum_squares(n, extra=0):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n + extra))


_loaded = threading.Event()


def _change():
    _loaded.wait()
    sum_squares.__defaults__ = (1,)


threading.Thread(target=_change, daemon=True).start()
_loaded.set()
