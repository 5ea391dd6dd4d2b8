"""``guardrail sandbox build|check|clean``: the sandbox image and its doctor."""

from __future__ import annotations

import json
from typing import Annotated

import typer
from rich.table import Table

from guardrail.cli.common import EXIT_UNAVAILABLE, console, reporting_errors
from guardrail.cli.options import ImageOption, RuntimeOption
from guardrail.errors import ImageNotFoundError
from guardrail.sandbox.docker import DockerSandbox

app = typer.Typer(help="Build, check and clean the Docker sandbox.", no_args_is_help=True)


@app.command()
def build(
    tag: Annotated[str | None, typer.Option(help="Image tag (default: content-hashed).")] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even when the image exists.")] = False,
) -> None:
    """Build the sandbox image offline (debootstrap + docker import); needs root."""
    from guardrail.sandbox.image import build_image, default_image

    with reporting_errors():
        target = tag or default_image()
        sandbox = DockerSandbox(target)
        try:
            if not force and _image_present(sandbox):
                console.print(f"image [bold]{target}[/] already present ({sandbox.image_id})")
                return
            build_image(target)
        finally:
            sandbox.close()
    console.print(f"built [bold]{target}[/]")


def _image_present(sandbox: DockerSandbox) -> bool:
    try:
        sandbox.check_ready()
    except ImageNotFoundError:
        return False
    return True


@app.command()
def check(
    image: ImageOption = None,
    runtime: RuntimeOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
) -> None:
    """Report the engine and image, and prove the hardening holds with probes in a container."""
    from guardrail.sandbox.doctor import check_sandbox

    with reporting_errors(), DockerSandbox(image, pool_size=1, runtime=runtime) as sandbox:
        report = check_sandbox(sandbox)
    if as_json:
        typer.echo(json.dumps(report.model_dump(mode="json"), indent=2))
    else:
        console.print(f"engine: Docker {report.engine}, runtime {report.runtime}")
        console.print(f"image:  {report.image} ({report.image_id[:19]})")
        table = Table("hardening property", "holds", "detail")
        for item in report.checks:
            table.add_row(item.name, "[green]yes[/]" if item.ok else "[bold red]NO[/]", item.detail)
        console.print(table)
    if not report.ok:
        raise typer.Exit(EXIT_UNAVAILABLE)


@app.command()
def clean(
    everything: Annotated[
        bool, typer.Option("--all", help="Also remove containers of running guardrail processes.")
    ] = False,
) -> None:
    """Remove sandbox containers left behind by crashed runs."""
    from guardrail.sandbox.docker import remove_leftovers

    removed = remove_leftovers(include_live_owners=everything)
    console.print(f"removed {len(removed)} leftover sandbox container(s)")
