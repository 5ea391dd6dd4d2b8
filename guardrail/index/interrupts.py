"""`holding_interrupts`: a Ctrl-C that arrives while an index is written waits for the write.

Chroma has no transactions, so `CodeIndex` makes a run all-or-nothing the way a process can: it
embeds everything first (an interrupt then leaves the index as it was), then writes with SIGINT
held, and delivers the held interrupt as soon as the writes are done.
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

__all__ = ["holding_interrupts"]


@contextmanager
def holding_interrupts() -> Iterator[None]:
    """Defer SIGINT until the block ends, then act as the handler in force would have.

    Only the main thread can set a handler (Python delivers signals there); elsewhere, and when
    SIGINT is ignored, the block just runs.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.getsignal(signal.SIGINT)
    if previous in (signal.SIG_IGN, None):
        yield
        return
    held: list[tuple[int, FrameType | None]] = []
    signal.signal(signal.SIGINT, lambda signum, frame: held.append((signum, frame)))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if held:
        if callable(previous):
            previous(*held[0])
        else:  # SIG_DFL: what the default would have done
            raise KeyboardInterrupt
