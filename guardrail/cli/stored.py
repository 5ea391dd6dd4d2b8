"""``guardrail verify --stored``: judge every indexed snippet against the tests stored with it.

Exit codes: 0 when no snippet failed its stored tests (snippets without tests, or that nothing
could judge, do not count against it), 1 when at least one snippet is ``failed``, ``error`` or
``timeout`` against its own tests, 2 on bad input (no such index or collection, an empty one),
3 when the sandbox is unavailable. A CI job can gate on "every function passes its doctests".
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer
from rich.table import Table

from guardrail.cli.common import EXIT_NONE_VERIFIED, console, fail, reporting_errors
from guardrail.cli.index import open_index
from guardrail.cli.interrupts import removing_containers_on_signals
from guardrail.cli.options import build_gate
from guardrail.cli.verify import status_cell, why_cell
from guardrail.safetext import cell, dumps_json

if TYPE_CHECKING:
    from guardrail.index.stored import StoredCheck

__all__ = ["verify_stored_command"]


def verify_stored_command(
    *,
    collection: str,
    index_dir: Path | None,
    chroma_url: str | None,
    embedding: str,
    as_json: bool,
    image: str | None,
    timeout: float,
    runtime: str | None,
    no_cache: bool,
    backend: str | None = None,
    ray_address: str | None = None,
) -> None:
    """Open the index (never creating it), judge every snippet, render, exit as documented."""
    with reporting_errors():
        from guardrail.index.stored import verify_stored

        code_index = open_index(collection, index_dir, chroma_url, embedding, create=False)
        if code_index.count() == 0:
            fail(
                f"collection {code_index.name!r} is empty",
                hint="index code first with `guardrail index PATH` (same --collection/--path)",
            )
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
            checks = verify_stored(code_index, gate)
    if as_json:
        payload = _payload(code_index.name, code_index.location, checks)
        typer.echo(dumps_json(payload, ascii_only=True))
    else:
        console.print(_table(code_index.name, checks))
    if any(check.failing for check in checks):
        raise typer.Exit(EXIT_NONE_VERIFIED)


def _payload(collection: str, location: str, checks: list[StoredCheck]) -> dict[str, Any]:
    from guardrail.index.stored import stored_summary

    return {
        "collection": collection,
        "location": location,
        "summary": stored_summary(checks),
        "failing": sum(check.failing for check in checks),
        "snippets": [_row(check) for check in checks],
    }


def _row(check: StoredCheck) -> dict[str, Any]:
    snippet, verdict = check.snippet, check.verdict
    return {
        "id": snippet.index_id,
        "file": snippet.file,
        "module": snippet.module,
        "qualified_name": snippet.qualified_name,
        "line": snippet.start_line,
        "end_line": snippet.end_line,
        "status": verdict.status.value,
        "reason": verdict.reason.value,
        "judged_against": check.source.value,
        "tests": snippet.tests,
        "verdict": verdict.model_dump(mode="json"),
    }


def _table(collection: str, checks: list[StoredCheck]) -> Table:
    from guardrail.index.stored import stored_summary

    summary = ", ".join(f"{n} {key}" for key, n in stored_summary(checks).items())
    table = Table(
        title=cell(f"guardrail verify --stored: collection {collection}"),
        caption=cell(f"{len(checks)} snippets: {summary or 'none'}"),
    )
    for column in ("status", "reason", "snippet", "where", "tests", "first failure / message"):
        table.add_column(column, overflow="fold")
    root = _common_root([check.snippet.file for check in checks])
    for check in checks:
        snippet, verdict = check.snippet, check.verdict
        passed = sum(t.passed for t in verdict.tests)
        table.add_row(
            status_cell(verdict),
            verdict.reason.value,
            cell(snippet.qualified_name or snippet.index_id),
            cell(_where(snippet.file, snippet.start_line, root)),
            f"{passed}/{len(verdict.tests)} {check.source.value}" if verdict.tests else "-",
            "" if verdict.verified else why_cell(verdict),
        )
    return table


def _common_root(files: list[str]) -> Path | None:
    """The deepest folder holding every file, so the table shows short relative paths."""
    absolute = [file for file in files if Path(file).is_absolute()]
    if not absolute or len(absolute) != len(files):
        return None
    return Path(os.path.commonpath([str(Path(file).parent) for file in absolute]))


def _where(file: str, line: int, root: Path | None) -> str:
    shown = str(Path(file).relative_to(root)) if root is not None and file else file or "-"
    return f"{shown}:{line}" if line else shown
