"""``guardrail verify FILE... --tests TESTS``: judge code files against tests."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from guardrail.candidates import SourcedCode, read_candidates
from guardrail.cli.common import EXIT_NONE_VERIFIED, console, fail, reporting_errors
from guardrail.cli.index import ChromaUrlOption, CollectionOption, EmbeddingOption, IndexDirOption
from guardrail.cli.interrupts import removing_containers_on_signals
from guardrail.cli.options import (
    BackendOption,
    ImageOption,
    NoCacheOption,
    RayAddressOption,
    RuntimeOption,
    TimeoutOption,
    build_gate,
)
from guardrail.cli.remote import ServerOption, refuse_local_options
from guardrail.safetext import cell, dumps_json
from guardrail.spec import Spec
from guardrail.verdict import Status, Verdict


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)


def verify(  # noqa: PLR0917 - Typer maps parameters to options; callers never pass them positionally
    files: Annotated[
        list[Path] | None,
        typer.Argument(help="Code files, or .jsonl files with one {'code': ...} per line."),
    ] = None,
    tests: Annotated[
        Path | None,
        typer.Option(
            "--tests",
            "-t",
            metavar="FILE",
            help="A .py file whose top-level statements are the tests (leading imports are"
            " setup), or a .json list of test strings.",
        ),
    ] = None,
    entry_point: Annotated[
        str | None,
        typer.Option(help="The function the tests call (default: inferred from the tests)."),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json", help="Print one JSON array (--stored: an object, a row per snippet)."
        ),
    ] = False,
    image: ImageOption = None,
    timeout: TimeoutOption = 5.0,
    runtime: RuntimeOption = None,
    backend: BackendOption = None,
    ray_address: RayAddressOption = None,
    no_cache: NoCacheOption = False,
    stored: Annotated[
        bool,
        typer.Option(
            "--stored",
            help="Instead of FILE... --tests: judge every snippet of the index against the tests"
            " stored with it (its doctests). Exit 1 when any snippet fails them.",
        ),
    ] = False,
    collection: CollectionOption = "guardrail",
    index_dir: IndexDirOption = None,
    chroma_url: ChromaUrlOption = None,
    embedding: EmbeddingOption = "minilm",
    server: ServerOption = None,
) -> None:
    """Verify code against tests in the Docker sandbox.

    Exit code 0 when at least one candidate verified, 1 when none did, 2 on bad input (nothing
    runs), 3 when the sandbox is unavailable, 70 on an internal error. With --stored (and
    --collection/--path/--chroma-url): one row per indexed snippet; exit 0 when none is failed,
    error or timeout against its stored tests (snippets without tests do not count), 1 otherwise.
    With --server (or $GUARDRAIL_SERVER), a `guardrail serve` judges FILE... instead.
    """
    if stored:
        if files or tests is not None or entry_point is not None:
            fail("--stored judges the indexed snippets; give no FILE, --tests or --entry-point")
        if server is not None:
            fail("--stored judges a local index; it does not run with --server")
        from guardrail.cli.stored import verify_stored_command  # it renders with this module

        verify_stored_command(
            collection=collection,
            index_dir=index_dir,
            chroma_url=chroma_url,
            embedding=embedding,
            as_json=as_json,
            image=image,
            timeout=timeout,
            runtime=runtime,
            no_cache=no_cache,
            backend=backend,
            ray_address=ray_address,
        )
        return
    if not files or tests is None:
        fail("give code FILE... and --tests TESTS (or --stored to judge an index)")
    with reporting_errors():
        spec = Spec.from_file(tests, entry_point)
        candidates = read_candidates(files)
        codes = [c.code for c in candidates]
        if server is not None:
            refuse_local_options(no_cache=no_cache)
            from guardrail.client import RemoteGate

            with RemoteGate(server) as remote:
                verdicts = remote.verify(codes, spec)
        else:
            with (
                build_gate(
                    image=image,
                    timeout=timeout,
                    no_cache=no_cache,
                    runtime=runtime,
                    backend=backend,
                    ray_address=ray_address,
                ) as gate,
                removing_containers_on_signals(gate.sandbox),
            ):
                verdicts = gate.verify(codes, spec)
    if as_json:
        rows = [_json_row(c, v) for c, v in zip(candidates, verdicts, strict=True)]
        typer.echo(dumps_json(rows, ascii_only=True))
    else:
        console.print(verdict_table(candidates, verdicts))
    if not any(v.status is Status.VERIFIED for v in verdicts):
        raise typer.Exit(EXIT_NONE_VERIFIED)


def _json_row(candidate: SourcedCode, verdict: Verdict) -> dict[str, object]:
    return {"source": candidate.source, **verdict.model_dump(mode="json")}


STATUS_STYLE = {
    Status.VERIFIED: "bold green",
    Status.FAILED: "red",
    Status.ERROR: "magenta",
    Status.TIMEOUT: "yellow",
    Status.UNVERIFIABLE: "dim",
}


def status_cell(verdict: Verdict) -> Text:
    """The verdict's status word in its colour (the only styled cell: nothing else is markup)."""
    return Text(verdict.status.value, style=STATUS_STYLE[verdict.status])


def why_cell(verdict: Verdict) -> Text:
    """The first failing test and its outcome, else the verdict's message, as plain text."""
    failing = next((t for t in verdict.tests if not t.passed), None)
    return cell(f"{failing.outcome}: {failing.test}" if failing else verdict.message)


def verdict_table(candidates: list[SourcedCode], verdicts: list[Verdict]) -> Table:
    """A Rich table, one row per candidate: status, tests passed, first failing test, time.

    Every cell is a `Text` of cleaned, capped text (`guardrail.safetext`): sources, messages and
    tests come from files and candidates and are never read as markup or escape sequences.
    """
    table = Table(title="guardrail verdicts", show_lines=False)
    for column in ("source", "status", "tests", "first failure / message", "alias", "time"):
        table.add_column(column, overflow="fold")
    for candidate, verdict in zip(candidates, verdicts, strict=True):
        passed = sum(t.passed for t in verdict.tests)
        table.add_row(
            cell(candidate.source),
            status_cell(verdict),
            f"{passed}/{len(verdict.tests)}" if verdict.tests else "-",
            why_cell(verdict),
            cell(verdict.alias or ""),
            "cached" if verdict.cached else f"{verdict.duration_s * 1000:.0f} ms",
        )
    return table
