"""``guardrail sandbox build|check|clean``: the sandbox image and its doctor."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from guardrail.cli.common import EXIT_UNAVAILABLE, console, reporting_errors
from guardrail.cli.options import ImageOption, RuntimeOption
from guardrail.errors import ImageNotFoundError
from guardrail.safetext import cell, dumps_json, one_line
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
                present = f" already present ({one_line(sandbox.image_id)})"
                console.print(Text.assemble("image ", (one_line(target), "bold"), present))
                return
            build_image(target)
        finally:
            sandbox.close()
    console.print(Text.assemble("built ", (one_line(target), "bold")))


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
        typer.echo(dumps_json(report.model_dump(mode="json"), ascii_only=True))
    else:
        # Engine, image and probe details come from the engine and the container: plain text.
        engine = f"engine: Docker {one_line(report.engine)}, runtime {one_line(report.runtime)}"
        console.print(Text(engine), highlight=False)
        image = f"image:  {one_line(report.image)} ({one_line(report.image_id[:19])})"
        console.print(Text(image), highlight=False)
        table = Table("hardening property", "holds", "detail")
        for item in report.checks:
            holds = Text("yes", "green") if item.ok else Text("NO", "bold red")
            table.add_row(cell(item.name), holds, cell(item.detail, limit=1000))
        console.print(table)
    if not report.ok:
        raise typer.Exit(EXIT_UNAVAILABLE)


@app.command()
def clean(
    everything: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Also remove running containers of live or hung guardrail processes, on any host.",
        ),
    ] = False,
) -> None:
    """Remove sandbox containers left behind by crashed runs (those provably dead)."""
    from guardrail.sandbox.docker import remove_leftovers

    with reporting_errors():
        removed = remove_leftovers(include_live_owners=everything)
    console.print(f"removed {len(removed)} leftover sandbox container(s)")
