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

from guardrail.errors import InputError
from guardrail.sandbox.limits import MAX_TIMEOUT_S

if TYPE_CHECKING:  # a client of `guardrail serve` builds no Gate nor sandbox: it imports none
    from guardrail.gate import Gate
    from guardrail.sandbox.base import Sandbox


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


BackendOption = Annotated[
    str | None,
    typer.Option(
        envvar="GUARDRAIL_BACKEND",
        help="Where candidates run: docker (this machine's engine; the default) or ray (every"
        " node of a Ray cluster that offers guardrail_engine; see docs/ray.md).",
    ),
]
RayAddressOption = Annotated[
    str | None,
    typer.Option(
        envvar="GUARDRAIL_RAY_ADDRESS",
        help="The Ray cluster for --backend ray (head host:port, ray://host:port, or auto).",
    ),
]


def build_sandbox(
    *,
    image: str | None,
    timeout: float | None,
    runtime: str | None = None,
    pool_size: int | None = None,
    backend: str | None = None,
    ray_address: str | None = None,
) -> Sandbox:
    """The sandbox the CLI options ask for: a `DockerSandbox`, or a `RaySandbox` over a cluster.

    ``pool_size`` is per node with Ray. A backend other than docker or ray is a usage error.
    """
    chosen = (backend or "docker").strip().lower()
    if chosen == "docker":
        from guardrail.sandbox.docker import DockerSandbox

        return DockerSandbox(image, timeout_s=timeout, runtime=runtime, pool_size=pool_size)
    if chosen == "ray":
        from guardrail.sandbox.raysandbox import RaySandbox

        return RaySandbox(
            ray_address, image=image, timeout_s=timeout, runtime=runtime, pool_size=pool_size
        )
    raise InputError(f"--backend (or $GUARDRAIL_BACKEND) must be docker or ray, not {backend!r}")


def build_gate(
    *,
    image: str | None,
    timeout: float,
    no_cache: bool,
    runtime: str | None = None,
    backend: str | None = None,
    ray_address: str | None = None,
) -> Gate:
    """A Gate over the sandbox `build_sandbox` makes of the CLI options."""
    from guardrail.gate import Gate

    sandbox = build_sandbox(
        image=image, timeout=timeout, runtime=runtime, backend=backend, ray_address=ray_address
    )
    return Gate(sandbox, cache=not no_cache)
