"""Options shared by the commands that run the gate, and the one place the CLI builds a Gate.

Numbers from the command line or a ``GUARDRAIL_*`` variable are checked here, before anything
runs: ``nan``, ``inf``, zero, negative or absurd values are a usage error (exit code 2) naming the
option, its variable and the range, never an ``OverflowError`` from deep inside the sandbox.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Annotated

import typer

from guardrail.sandbox.limits import MAX_TIMEOUT_S

if TYPE_CHECKING:  # a client of `guardrail serve` builds no Gate: it imports none
    from guardrail.gate import Gate


def bounded(low: float, high: float) -> Callable[[float | None], float | None]:
    """A Typer callback: the value must be a finite number in ``(low, high]``."""

    def check(value: float | None) -> float | None:
        if value is not None and not (math.isfinite(value) and low < value <= high):
            raise typer.BadParameter(f"must be a number in ({low:g}, {high:g}], got {value!r}")
        return value

    return check


ImageOption = Annotated[
    str | None,
    typer.Option(
        envvar="GUARDRAIL_IMAGE",
        help="Sandbox image with python3 (default: the locally built guardrail image).",
    ),
]
TimeoutOption = Annotated[
    float,
    typer.Option(
        envvar="GUARDRAIL_TIMEOUT",
        callback=bounded(0, MAX_TIMEOUT_S),
        help=f"Wall-clock seconds per candidate, at most {MAX_TIMEOUT_S:g}.",
    ),
]
NoCacheOption = Annotated[bool, typer.Option("--no-cache", help="Ignore the verdict cache.")]
RuntimeOption = Annotated[
    str | None,
    typer.Option(
        envvar="GUARDRAIL_RUNTIME",
        help="Container runtime of the engine to judge under, e.g. runsc (gVisor);"
        " default: the engine's default (runc).",
    ),
]


def build_gate(
    *, image: str | None, timeout: float, no_cache: bool, runtime: str | None = None
) -> Gate:
    """A Gate over a `DockerSandbox` configured from CLI options."""
    from guardrail.gate import Gate
    from guardrail.sandbox.docker import DockerSandbox

    return Gate(DockerSandbox(image, timeout_s=timeout, runtime=runtime), cache=not no_cache)
