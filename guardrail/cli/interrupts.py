"""SIGINT/SIGTERM during a command that holds sandbox containers: remove them, say so, exit.

Without this an interrupted ``guardrail verify`` (or ``guardrail eval``) exits at once and leaves
its containers stopped on the engine. Every command that builds a sandbox wraps its work in
`removing_containers_on_signals`; the exit codes are the shell's: 130 for SIGINT, 143 for SIGTERM.
"""

from __future__ import annotations

import signal
from collections.abc import Iterator
from contextlib import contextmanager
from types import FrameType

from guardrail.cli.common import err_console
from guardrail.sandbox.base import Sandbox

__all__ = ["removing_containers_on_signals"]

_SIGNALS = (signal.SIGINT, signal.SIGTERM)


@contextmanager
def removing_containers_on_signals(sandbox: Sandbox) -> Iterator[None]:
    """Until the block ends, SIGINT/SIGTERM close ``sandbox`` (killing its containers by id),
    print ``interrupted: removed N sandbox container(s)`` and exit with 128 + the signal number.

    Only in the main thread (Python delivers signals there); elsewhere the block runs unguarded.
    """
    from guardrail.sandbox.docker import DockerSandbox

    def interrupted(signum: int, _frame: FrameType | None) -> None:
        for number in _SIGNALS:  # a second Ctrl-C must not cut the cleanup short
            signal.signal(number, signal.SIG_IGN)
        if isinstance(sandbox, DockerSandbox):
            removed = sandbox.shutdown()
        else:
            sandbox.close()
            removed = 0
        err_console.print(
            f"interrupted: removed {removed} sandbox container(s)", highlight=False, markup=False
        )
        raise SystemExit(128 + signum)

    try:
        previous = {number: signal.signal(number, interrupted) for number in _SIGNALS}
    except ValueError:  # not the main thread
        yield
        return
    try:
        yield
    finally:
        for number, handler in previous.items():  # None: installed outside Python
            signal.signal(number, signal.SIG_DFL if handler is None else handler)
