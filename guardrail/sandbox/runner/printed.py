"""What the candidate prints during a request: written through to its stdout, kept for the judge.

The text is carried, capped, in the next frame the candidate sends, as ``printed`` (and
``printed_cut`` when more was printed than is kept). The judge's doctest checker must see what a
call printed; a cut text is never compared (``calls``). Nothing here is trusted by the judge: a
hostile candidate can print, or claim to have printed, what it likes, and only changes what its
own call is said to have shown.
"""

from __future__ import annotations

from typing import Any, TextIO

MAX_PRINTED = 64_000


class Tee:
    """The candidate's stdout during requests: written through, and kept (capped) for the
    judge, whose doctest checker must see what the call printed."""

    def __init__(self, real: TextIO) -> None:
        self.real = real
        self.kept: list[str] = []
        self.size = 0
        self.cut = False  # more was printed than is kept: the judge must not compare it

    def write(self, text: str) -> int:
        self.real.write(text)
        piece = str(text)[: MAX_PRINTED - self.size]
        if piece:
            self.kept.append(piece)
            self.size += len(piece)
        self.cut = self.cut or len(piece) < len(text)
        return len(text)

    def flush(self) -> None:
        self.real.flush()

    def drain(self) -> dict[str, Any]:
        """What was printed since the last frame, as that frame's fields."""
        said: dict[str, Any] = {"printed": "".join(self.kept)} if self.kept else {}
        if self.cut:
            said["printed_cut"] = True
        self.kept, self.size, self.cut = [], 0, False
        return said

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno: the real stream's
        return getattr(self.real, name)
