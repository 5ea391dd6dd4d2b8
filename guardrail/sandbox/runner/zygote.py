"""The zygote: forks each candidate process. Forked before any job, so it never held a test."""

from __future__ import annotations

import json
import os
import signal
import socket
import sys

from .candidate import candidate_serve
from .framing import HEADER
from .privilege import become, keep_only_fds


def zygote_main(control: socket.socket) -> None:
    """Fork candidates on request. Forked before any job, so it never held a test."""
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
    while True:
        try:
            header, fds, _flags, _addr = socket.recv_fds(control, HEADER.size, 3)
        except OSError:
            os._exit(0)
        if len(header) < HEADER.size:
            os._exit(0)
        (size,) = HEADER.unpack(header)
        payload = b""
        while len(payload) < size:
            chunk = control.recv(size - len(payload))
            if not chunk:
                os._exit(0)
            payload += chunk
        request = json.loads(payload)
        pid = os.fork()
        if pid == 0:
            channel, out, err = fds
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.dup2(out, 1)
            os.dup2(err, 2)
            keep_only_fds(1, 2, channel)
            try:
                become(request["uid"], request["limits"], 1000)
                sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
                candidate_serve(channel, request["code"], request["entry_point"])
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        control.sendall(HEADER.pack(pid))
