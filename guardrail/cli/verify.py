"""``guardrail verify FILE... --tests TESTS``: judge code files against tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from guardrail.candidates import SourcedCode, read_candidates
from guardrail.cli.common import EXIT_NONE_VERIFIED, console, reporting_errors
from guardrail.cli.options import (
    ImageOption,
    NoCacheOption,
    RuntimeOption,
    TimeoutOption,
    build_gate,
)
from guardrail.spec import Spec
from guardrail.verdict import Status, Verdict


def register(app: typer.Typer) -> None:
    app.command("verify")(verify)


def verify(  # noqa: PLR0917 - Typer maps parameters to options; callers never pass them positionally
    files: Annotated[
        list[Path],
        typer.Argument(help="Code files, or .jsonl files with one {'code': ...} per line."),
    ],
    tests: Annotated[
        Path,
        typer.Option(
            "--tests",
            "-t",
            help="A .py file whose top-level statements are the tests (leading imports are"
            " setup), or a .json list of test strings.",
        ),
    ],
    entry_point: Annotated[
        str | None,
        typer.Option(help="The function the tests call (default: inferred from the tests)."),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON array.")] = False,
    image: ImageOption = None,
    timeout: TimeoutOption = 5.0,
    runtime: RuntimeOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Verify code against tests in the Docker sandbox.

    Exit code 0 when at least one candidate verified, 1 when none did, 2 on bad input,
    3 when the sandbox is unavailable.
    """
    with reporting_errors():
        spec = Spec.from_file(tests, entry_point)
        candidates = read_candidates(files)
        with build_gate(image=image, timeout=timeout, no_cache=no_cache, runtime=runtime) as gate:
            verdicts = gate.verify([c.code for c in candidates], spec)
    if as_json:
        rows = [_json_row(c, v) for c, v in zip(candidates, verdicts, strict=True)]
        typer.echo(json.dumps(rows, indent=2))
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


def verdict_table(candidates: list[SourcedCode], verdicts: list[Verdict]) -> Table:
    """A Rich table, one row per candidate: status, tests passed, first failing test, time."""
    table = Table(title="guardrail verdicts", show_lines=False)
    for column in ("source", "status", "tests", "first failure / message", "alias", "time"):
        table.add_column(column, overflow="fold")
    for candidate, verdict in zip(candidates, verdicts, strict=True):
        passed = sum(t.passed for t in verdict.tests)
        failing = next((t for t in verdict.tests if not t.passed), None)
        why = f"{failing.outcome}: {failing.test}" if failing else verdict.message
        table.add_row(
            candidate.source,
            f"[{STATUS_STYLE[verdict.status]}]{verdict.status.value}[/]",
            f"{passed}/{len(verdict.tests)}" if verdict.tests else "-",
            why,
            verdict.alias or "",
            "cached" if verdict.cached else f"{verdict.duration_s * 1000:.0f} ms",
        )
    return table
