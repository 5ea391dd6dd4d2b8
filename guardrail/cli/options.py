"""Options shared by the commands that run the gate, and the one place the CLI builds a Gate."""

from __future__ import annotations

from typing import Annotated

import typer

from guardrail.gate import Gate

ImageOption = Annotated[
    str | None,
    typer.Option(
        envvar="GUARDRAIL_IMAGE",
        help="Sandbox image with python3 (default: the locally built guardrail image).",
    ),
]
TimeoutOption = Annotated[
    float, typer.Option(envvar="GUARDRAIL_TIMEOUT", help="Wall-clock seconds per candidate.")
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
    from guardrail.sandbox.docker import DockerSandbox

    return Gate(DockerSandbox(image, timeout_s=timeout, runtime=runtime), cache=not no_cache)
