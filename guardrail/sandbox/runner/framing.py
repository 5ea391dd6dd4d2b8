"""Length-prefixed JSON frames on a file descriptor: the one wire format inside the sandbox
(host <-> supervisor, supervisor <-> judge, judge <-> candidate)."""

from __future__ import annotations

import json
import os
import select
import struct
import time
from typing import Any

PROTOCOL = 1
MAX_FRAME = 16 * 1024 * 1024
HEADER = struct.Struct(">I")


class ChannelClosed(Exception):
    """The other end closed the channel."""


class FrameTooLarge(ValueError):
    """A frame the other end would refuse (over `MAX_FRAME`); raised before anything is sent."""


def pack_frame(obj: object) -> bytes:
    data = json.dumps(obj, separators=(",", ":")).encode("utf-8")
    return HEADER.pack(len(data)) + data


def read_exact(fd: int, size: int, deadline: float | None = None) -> bytes:
    """Read exactly ``size`` bytes from ``fd``; `TimeoutError` past ``deadline`` (monotonic)."""
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise ChannelClosed
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, deadline: float | None = None) -> Any:
    (size,) = HEADER.unpack(read_exact(fd, HEADER.size, deadline))
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes is over the {MAX_FRAME} byte limit")
    return json.loads(read_exact(fd, size, deadline))


def write_frame(fd: int, obj: object) -> None:
    packed = pack_frame(obj)
    if len(packed) - HEADER.size > MAX_FRAME:
        size = len(packed) - HEADER.size
        raise FrameTooLarge(f"a frame of {size} bytes is over the {MAX_FRAME} byte limit")
    data = memoryview(packed)
    while data:
        data = data[os.write(fd, data) :]
