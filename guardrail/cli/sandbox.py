"""``guardrail sandbox build|check|clean|export|import``: the sandbox image and its doctor."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from guardrail.cli.common import EXIT_UNAVAILABLE, console, err_console, fail, reporting_errors
from guardrail.cli.options import (
    BackendOption,
    ImageOption,
    RayAddressOption,
    RuntimeOption,
    build_sandbox,
)
from guardrail.errors import ImageNotFoundError
from guardrail.safetext import cell, dumps_json, one_line
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.doctor import DoctorReport

app = typer.Typer(help="Build, check and clean the Docker sandbox.", no_args_is_help=True)


@app.command()
def build(  # noqa: PLR0917 - Typer maps parameters to options
    tag: Annotated[str | None, typer.Option(help="Image tag (default: content-hashed).")] = None,
    force: Annotated[bool, typer.Option(help="Rebuild even when the image exists.")] = False,
    requirements: Annotated[
        Path | None,
        typer.Option(
            "--requirements",
            "-r",
            help="Extend the image with these packages: one PEP 508 requirement a line"
            " (pin versions: the same file gives the same image).",
        ),
    ] = None,
    wheelhouse: Annotated[
        Path | None,
        typer.Option(
            help="A folder of wheels (and sdists): alone, every distribution in it is installed,"
            " offline; with --requirements, where they are looked for first.",
        ),
    ] = None,
    image: Annotated[
        str | None,
        typer.Option(
            help="The image to extend (any with python3 >= 3.10); default $GUARDRAIL_IMAGE,"
            " else the guardrail image. Only with --requirements/--wheelhouse.",
        ),
    ] = None,
    no_index: Annotated[
        bool, typer.Option("--no-index", help="Never ask the package index: --wheelhouse only.")
    ] = False,
) -> None:
    """Build the sandbox image offline (debootstrap + docker load; needs root), or extend one
    with a project's packages (--requirements FILE and/or --wheelhouse DIR).

    Extending: the image's own python3 says which version and platform it runs; the host's pip
    resolves wheels for it (pure-Python sdists are built on the host when its Python matches),
    installs them into the image's site-packages in a container without network, and commits
    the result as guardrail-sandbox-deps:<content hash>. The same base and inputs give the same
    tag, reused without a rebuild. Use it with `--image TAG` on verify, search and eval, or
    `GUARDRAIL_IMAGE=TAG`. A wheel with a startup hook (sitecustomize, usercustomize,
    apport_python_hook) is refused; .pth files with imports are left out and listed. Exit code
    2 on bad input (the message names the file and line, or the wheel), 3 when the engine or
    the base image is unavailable; a failed build leaves no tag.
    """
    if requirements is not None or wheelhouse is not None:
        _extend(image, requirements, wheelhouse, tag=tag, no_index=no_index, force=force)
        return
    if image is not None or no_index:
        fail(
            "--image and --no-index go with --requirements FILE or --wheelhouse DIR",
            hint="to check an image of your own: guardrail sandbox check --image NAME",
        )
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


def _extend(
    image: str | None,
    requirements: Path | None,
    wheelhouse: Path | None,
    *,
    tag: str | None,
    no_index: bool,
    force: bool,
) -> None:
    from guardrail.sandbox.extend import extend_image

    def progress(message: str) -> None:
        err_console.print(Text(one_line(message, 1000), "dim"), highlight=False, soft_wrap=True)

    with reporting_errors():
        made = extend_image(
            image,
            requirements=requirements,
            wheelhouse=wheelhouse,
            tag=tag,
            no_index=no_index,
            force=force,
            progress=progress,
        )
    done = "reused" if made.reused else "built"
    console.print(
        Text.assemble(
            f"{done} ",
            (one_line(made.tag), "bold"),
            f" ({one_line(made.image_id[:19])}) from {one_line(made.base)}",
            f", Python {one_line(made.python)}" if made.python else "",
        ),
        highlight=False,
        soft_wrap=True,
    )
    if made.packages:
        console.print(
            Text(f"packages: {one_line(' '.join(made.packages), 2000)}"),
            highlight=False,
            soft_wrap=True,
        )
    if made.left_out:
        console.print(
            Text(
                "left out (.pth files that would run code at interpreter start):"
                f" {one_line(', '.join(made.left_out), 1000)}"
            ),
            highlight=False,
            soft_wrap=True,
        )
    console.print(
        Text(
            f"use it: guardrail verify --image {made.tag} ...   or   export"
            f" GUARDRAIL_IMAGE={made.tag}"
        ),
        highlight=False,
        soft_wrap=True,
    )


def _image_present(sandbox: DockerSandbox) -> bool:
    try:
        sandbox.check_ready()
    except ImageNotFoundError:
        return False
    return True


@app.command("export")
def export(
    output: Annotated[
        Path, typer.Option("--output", "-o", help="The archive to write (docker save format).")
    ],
    image: ImageOption = None,
) -> None:
    """Write the sandbox image to a file, to load on another node with `guardrail sandbox import`.

    Every node of a cluster must run the same image id (it is part of the verdict identity);
    copying one image is how to be sure, whatever the Debian mirror serves by then. The engine
    is DOCKER_HOST's. Prints the image id.
    """
    from guardrail.sandbox.image import default_image, export_image

    target = image or default_image()
    with reporting_errors():
        image_id = export_image(target, output)
    console.print(Text(f"exported {one_line(target)} ({image_id}) to {output}"), highlight=False)


@app.command("import")
def import_(
    archive: Annotated[Path, typer.Argument(help="An archive of `guardrail sandbox export`.")],
) -> None:
    """Load an exported sandbox image into the engine (DOCKER_HOST's) and check its id.

    Exit code 3 when the engine reports another id than the archive holds.
    """
    from guardrail.sandbox.image import import_image

    with reporting_errors():
        ids = import_image(archive)
    console.print(Text(f"imported {', '.join(ids)} from {archive}"), highlight=False)


@app.command()
def check(
    image: ImageOption = None,
    runtime: RuntimeOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the report as JSON.")] = False,
    backend: BackendOption = None,
    ray_address: RayAddressOption = None,
) -> None:
    """Report the engine and image, and prove the hardening holds with probes in a container.

    With --backend ray: the same on every node of the cluster, one report per node (as JSON: an
    object of node to report), then each node's placement and pool figures.
    """
    from guardrail.sandbox.doctor import check_sandbox

    if (backend or "docker").strip().lower() != "docker":
        from guardrail.sandbox.raysandbox import RaySandbox

        with reporting_errors():
            sandbox = build_sandbox(
                image=image,
                timeout=None,
                runtime=runtime,
                backend=backend,
                ray_address=ray_address,
                pool_size=1,
            )
        assert isinstance(sandbox, RaySandbox)
        with reporting_errors(), sandbox:
            reports = [
                (node, DoctorReport.model_validate_json(text))
                for node, text in sandbox.check_nodes()
            ]
            placement = sandbox.nodes()
        if as_json:
            payload = {node: report.model_dump(mode="json") for node, report in reports}
            typer.echo(dumps_json({"nodes": payload, "placement": placement}, ascii_only=True))
        else:
            for node, report in reports:
                console.print(Text(f"node {node}", "bold"), highlight=False)
                _print_report(report)
            for entry in placement:
                figures = ", ".join(f"{key} {one_line(str(value))}" for key, value in entry.items())
                console.print(Text(figures), highlight=False, soft_wrap=True)
        if not all(report.ok for _, report in reports):
            raise typer.Exit(EXIT_UNAVAILABLE)
        return
    with reporting_errors(), DockerSandbox(image, pool_size=1, runtime=runtime) as docker:
        report = check_sandbox(docker)
    if as_json:
        typer.echo(dumps_json(report.model_dump(mode="json"), ascii_only=True))
    else:
        _print_report(report)
    if not report.ok:
        raise typer.Exit(EXIT_UNAVAILABLE)


def _print_report(report: DoctorReport) -> None:
    """One engine's report as text."""
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
