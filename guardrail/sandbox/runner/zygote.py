"""The zygote: forks each candidate process.

It is forked before any job and never receives anything of one: per candidate only a uid and
three descriptors arrive (the channel to the judge, stdout, stderr); the candidate reads its code
as the first frame of its own channel, written there by the supervisor. Whatever passes through
a process stays in its freed memory and in every later fork of it, so a neighbour's code (or
tests) must never pass through here. Nor does any code of the image's packages: the zygote's
``sys.path`` is the standard library's (``boot``); each candidate adds the packages for itself
after the drop (`add_project_packages`).
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import sys

from .candidate import candidate_serve
from .framing import HEADER
from .privilege import become, keep_only_fds
from .seccomp import Filter


def zygote_main(control: socket.socket, limits: dict[str, int], seccomp: Filter | None) -> None:
    """Fork a candidate for each uid the supervisor sends (with its three descriptors)."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    # Warm the modules candidates import most, so each fork starts with them loaded.
    for module in (
        "typing",
        "math",
        "itertools",
        "functools",
        "heapq",
        "bisect",
        "string",
        "datetime",
    ):
        __import__(module)
    # Out of the collector's reach: a collection in a forked candidate would otherwise touch
    # every inherited object and copy each page of the heap (copy-on-write) for nothing.
    gc.freeze()
    while True:
        try:
            header, fds, _flags, _addr = socket.recv_fds(control, HEADER.size, 3)
        except OSError:
            os._exit(0)
        if len(header) < HEADER.size:
            os._exit(0)
        (uid,) = HEADER.unpack(header)
        pid = os.fork()
        if pid == 0:
            channel, out, err = fds
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.dup2(out, 1)
            os.dup2(err, 2)
            keep_only_fds(1, 2, channel)
            try:
                become(uid, limits, 1000, seccomp)
                add_project_packages()
                sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
                candidate_serve(channel)
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        control.sendall(HEADER.pack(pid))


def add_project_packages() -> None:
    """Make the image's packages importable in this process, as ``site`` would have at start
    (its site directories, a virtual environment's, what their ``.pth`` files add, and the
    ``exit``/``help`` builtins), but without ``sitecustomize`` or ``usercustomize``.

    Called only in a candidate, after the drop to its uid and the seccomp filter: whatever a
    ``.pth`` file runs, runs as the candidate, which is untrusted anyway. The supervisor, the
    zygote, the judge and the reaper never import ``site`` nor see these directories.
    """
    import site

    known = site.removeduppaths()
    site.venv(known)  # adds to ``known`` (and returns it): typeshed says it may return None
    site.addsitepackages(known)
    site.setquit()
    site.setcopyright()
    site.sethelper()
