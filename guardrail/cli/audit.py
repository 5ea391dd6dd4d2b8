"""``guardrail audit``: near-clones a retriever cannot tell apart, run against each other.

``guardrail audit PATH`` (embeds only the functions LSH pairs up, in memory; ``--index``: indexes
PATH first, as ``guardrail index`` would, so unchanged files embed nothing on later runs) or
``guardrail audit --collection NAME`` (an existing index) is the ``tree`` command of
the ``audit`` group: a first argument that names no subcommand goes to ``tree``, so further
audits are subcommands of the same group: ``guardrail audit retriever`` (from guardrail-eval,
through the ``guardrail.audit_commands`` entry-point group, `guardrail.cli.plugins`) runs a
user's own retriever through the eval.

Exit codes:

====  ========================================================================================
0     no finding at or above ``--fail-on`` (default ``low``: any finding)
1     at least one finding at or above ``--fail-on``
2     bad input: no PATH and no --collection, a missing index or collection, a bad option or
      output path (nothing ran, no report written)
3     the sandbox (Docker engine, image, runtime) or the Chroma server is unavailable
130   interrupted (SIGINT; 143 for SIGTERM): this run's containers were removed
====  ========================================================================================

Reports are written whole or not at all (a temporary file renamed into place).
"""

from __future__ import annotations

import os
import tempfile
from enum import StrEnum
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn
from rich.table import Table
from rich.text import Text

from guardrail.cli.common import console, err_console, fail, reporting_errors
from guardrail.cli.index import (
    ChromaUrlOption,
    CollectionOption,
    EmbeddingOption,
    ExcludeOption,
    IncludeTestsOption,
    IndexDirOption,
    open_index,
    print_skips,
    split_path,
    store_tree,
)
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
from guardrail.cli.plugins import AUDIT_GROUP, AUDIT_KNOWN, PluginCommands
from guardrail.safetext import cell, dumps_json

if TYPE_CHECKING:
    from collections.abc import Iterator

    from guardrail.audit import AuditProgress, AuditReport, Embedder, Place
    from guardrail.index import TreeSplit

__all__ = ["app"]


class _TreeByDefault(PluginCommands):
    """A group whose first argument, when it names no subcommand, is the ``tree`` command's;
    ``audit retriever`` and other plugins come from `AUDIT_GROUP` when named."""

    plugin_group = AUDIT_GROUP
    known = AUDIT_KNOWN

    # ``ctx`` is Typer's own (vendored) click Context; its class is not public API.
    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in ctx.help_option_names and args[0] not in self.list_commands(ctx):
            args = ["tree", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_TreeByDefault,
    name="audit",
    help="Audits with execution evidence: `guardrail audit PATH` or `guardrail audit"
    " --collection NAME` (the tree command) finds near-clones a retriever cannot tell apart that"
    " behave differently; `guardrail audit retriever` runs your own retriever through the eval.",
    no_args_is_help=True,
    add_completion=False,
)


class FailOn(StrEnum):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"
    NEVER = "never"


def _report_path(value: Path | None) -> Path | None:
    """An output file whose folder exists and is writable, checked before anything runs."""
    if value is None:
        return None
    folder = value.parent if str(value.parent) else Path()
    if value.is_dir():
        raise typer.BadParameter(f"{value} is a directory; give a file name")
    if not folder.is_dir() or not os.access(folder, os.W_OK):
        raise typer.BadParameter(f"cannot write into {folder}: no such folder or not writable")
    return value


def _output(flag: str, what: str) -> Any:
    return typer.Option(flag, metavar="FILE", callback=_report_path, help=f"Write {what} to FILE.")


@app.command("tree")
def tree(  # noqa: PLR0917 - Typer maps parameters to options; callers never pass them positionally
    ctx: typer.Context,
    path: Annotated[
        Path | None,
        typer.Argument(help="A tree of Python files to index and audit (or use --collection)."),
    ] = None,
    collection: CollectionOption = "guardrail",
    index_dir: IndexDirOption = None,
    chroma_url: ChromaUrlOption = None,
    embedding: EmbeddingOption = "minilm",
    exclude: ExcludeOption = None,
    include_tests: IncludeTestsOption = False,
    json_file: Annotated[Path | None, _output("--json", "the findings as JSON")] = None,
    sarif_file: Annotated[Path | None, _output("--sarif", "a SARIF 2.1.0 log")] = None,
    html_file: Annotated[Path | None, _output("--html", "an HTML page")] = None,
    fail_on: Annotated[
        FailOn,
        typer.Option(
            "--fail-on", help="Exit 1 when a finding is at least this severe (never: exit 0)."
        ),
    ] = FailOn.LOW,
    inputs: Annotated[
        int, typer.Option("--inputs", min=1, max=200, help="Inputs tried per cluster.")
    ] = 40,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the input generator.")] = 0,
    jaccard: Annotated[
        float,
        typer.Option("--jaccard", min=0.05, max=1.0, help="LSH threshold on token shingles."),
    ] = 0.5,
    embedding_threshold: Annotated[
        float,
        typer.Option(
            "--embedding-similarity",
            min=0.05,
            max=1.0,
            help="Cosine similarity of stored embeddings that confirms a near-clone pair.",
        ),
    ] = 0.97,
    token_threshold: Annotated[
        float,
        typer.Option(
            "--token-similarity",
            min=0.05,
            max=1.0,
            help="Token similarity (1 - edit distance / length) that confirms a pair.",
        ),
    ] = 0.85,
    no_embedding: Annotated[
        bool,
        typer.Option(
            "--no-embedding",
            help="Confirm pairs by token edit distance alone: PATH is split, nothing is indexed"
            " or embedded (the fast way through a large tree).",
        ),
    ] = False,
    index_first: Annotated[
        bool,
        typer.Option(
            "--index",
            help="Index PATH first, as `guardrail index` would, and audit the index (unchanged"
            " files embed nothing on later runs); by default only the functions LSH pairs up"
            " are embedded, in memory, and nothing is written.",
        ),
    ] = False,
    image: ImageOption = None,
    timeout: TimeoutOption = 10.0,
    runtime: RuntimeOption = None,
    backend: BackendOption = None,
    ray_address: RayAddressOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Audit a tree (guardrail audit PATH) or an index (--collection NAME); the default command.

    Clusters near-identical functions (MinHash/LSH, confirmed by stored embeddings or token edit
    distance), runs each cluster's members on the same generated inputs in the sandbox, in their
    module context, and reports the pairs that diverge.

    Exit codes: 0 nothing at or above --fail-on, 1 findings at or above it, 2 bad input,
    3 sandbox or Chroma unavailable.
    """
    with reporting_errors():
        from guardrail.audit import ClusterSettings, audit_index, audit_snippets

        settings = ClusterSettings(
            jaccard=jaccard, embedding=embedding_threshold, tokens=token_threshold
        )
        _check_inputs(ctx, path, no_embedding=no_embedding, index_first=index_first)
        split = None
        if path is not None:
            if not path.exists():
                fail(f"{path}: no such file or directory")
            split = split_path(path, exclude=exclude, include_tests=include_tests)
        code_index = None
        if not no_embedding and (index_first or path is None):
            code_index = open_index(
                collection, index_dir, chroma_url, embedding, create=path is not None
            )
            if path is not None and split is not None:
                store_tree(code_index, path, split)
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
            _progress() as on_progress,
        ):
            if code_index is None:
                assert split is not None  # a PATH (checked above)
                assert path is not None
                report = audit_snippets(
                    split.snippets,
                    None,
                    gate,
                    settings=settings,
                    inputs=inputs,
                    seed=seed,
                    target=str(path),
                    on_progress=on_progress,
                    embed=None if no_embedding else _embedder(embedding, on_progress),
                )
            else:
                report = audit_index(
                    code_index,
                    gate,
                    under=path,
                    settings=settings,
                    inputs=inputs,
                    seed=seed,
                    target=str(path) if path is not None else code_index.name,
                    on_progress=on_progress,
                )
        report = _with_skips(report, split)
        _write_reports(report, json_file, sarif_file, html_file)
    print_skips(split)
    console.print(_table(report))
    if report.not_compared:
        console.print(_not_compared_table(report))
    if fail_on is not FailOn.NEVER:
        from guardrail.audit import Severity

        if report.at_least(Severity(fail_on.value)):
            raise typer.Exit(1)


def _check_inputs(
    ctx: typer.Context, path: Path | None, *, no_embedding: bool, index_first: bool
) -> None:
    """Exit 2 for options that do not go together, before anything is read or run."""
    if path is None and not _given(ctx, "collection"):
        fail(
            "give a PATH to audit or --collection NAME of an existing index",
            hint="for example `guardrail audit src/` or `guardrail audit --collection app`",
        )
    if no_embedding and path is None:
        fail("--no-embedding audits a PATH (an index's snippets come with their embeddings)")
    if no_embedding and index_first:
        fail("--no-embedding embeds nothing and --index embeds everything: give one")


def _embedder(embedding: str, on_progress: AuditProgress) -> Embedder:
    """The ``--embedding`` model as the audit's embedder (only candidate pairs' functions)."""
    from guardrail.audit import embedder
    from guardrail.index import load_embedding

    return embedder(
        load_embedding(embedding), lambda done, total: on_progress("embedding", done, total)
    )


def _with_skips(report: AuditReport, split: TreeSplit | None) -> AuditReport:
    """The report with what the split of PATH skipped (nothing to add for a collection)."""
    if split is None:
        return report
    every = [*split.skipped.files, *split.skipped.functions]
    skipped = {"skipped": split.skipped.by_kind(), "skipped_files": tuple(map(str, every))}
    return report.model_copy(update=skipped)


def _given(ctx: typer.Context, parameter: str) -> bool:
    """Whether the user set ``parameter`` (on the command line or by its variable)."""
    source = ctx.get_parameter_source(parameter)
    return source is not None and source.name != "DEFAULT"


def _write_reports(
    report: AuditReport, json_file: Path | None, sarif_file: Path | None, html_file: Path | None
) -> None:
    from guardrail.audit import to_html, to_sarif

    if json_file is not None:
        _write(json_file, dumps_json(report.model_dump(mode="json")) + "\n")
    if sarif_file is not None:
        _write(sarif_file, dumps_json(to_sarif(report, tool_version=_version())) + "\n")
    if html_file is not None:
        _write(html_file, to_html(report))


def _write(path: Path, text: str) -> None:
    """Whole or not at all: a temporary file in the same folder, renamed into place."""
    folder = path.parent if str(path.parent) else Path()
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as out:
            out.write(text)
        Path(temporary).replace(path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _version() -> str:
    try:
        return version("guardrail-exec")
    except PackageNotFoundError:
        return "0+unknown"


class _Progress:
    """Rich progress on stderr for a terminal; nothing when piped."""

    def __init__(self) -> None:
        self.bar = Progress(
            SpinnerColumn(),
            TextColumn("[progress.description]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            console=err_console,
            transient=True,
            disable=not err_console.is_terminal,
        )
        self.tasks: dict[str, Any] = {}

    def __call__(self, phase: str, done: int, total: int) -> None:
        labels = {
            "signatures": "hashing snippets",
            "embedding": "embedding candidate pairs",
            "clusters": "running near-clones",
        }
        if phase not in self.tasks:
            self.tasks[phase] = self.bar.add_task(labels.get(phase, phase), total=total)
        self.bar.update(self.tasks[phase], completed=done, total=total)


def _progress() -> Any:
    from contextlib import contextmanager

    @contextmanager
    def running() -> Iterator[AuditProgress]:
        hook = _Progress()
        with hook.bar:
            yield hook

    return running()


def _table(report: AuditReport) -> Table:
    counts = report.counts
    caption = (
        f"{counts.snippets} snippets ({counts.compared} compared), {counts.candidate_pairs}"
        f" candidate pairs, {counts.confirmed_pairs} near-clone pairs in {counts.clusters}"
        f" clusters, {counts.pairs_run} pairs run ({counts.sandbox_runs} sandbox runs):"
        f" {len(report.findings)} findings"
    )
    if counts.pairs_not_run:
        why = ", ".join(f"{n} {category}" for category, n in counts.pairs_not_run.items())
        caption += f"; {sum(counts.pairs_not_run.values())} pairs not compared ({why})"
    table = Table(title=cell(f"guardrail audit: {report.target}"), caption=cell(caption, limit=600))
    for column in ("severity", "left", "right", "diverging input", "outputs"):
        table.add_column(column, overflow="fold")
    styles = {"high": "bold red", "medium": "yellow", "low": "cyan"}
    for finding in report.findings:
        left, right = finding.left, finding.right
        table.add_row(
            cell(finding.severity.value, styles[finding.severity.value]),
            _side(left),
            _side(right),
            cell(finding.input.call(left.qualified_name)),
            cell(f"{left.output.text} vs {right.output.text}"),
        )
    return table


_NOT_COMPARED_ROWS = 50  # rows shown; every one is in --json, --sarif and --html


def _not_compared_table(report: AuditReport) -> Table:
    """The pairs that were not compared, each with its reason (never a silent "same")."""
    shown = report.not_compared[:_NOT_COMPARED_ROWS]
    left_out = len(report.not_compared) - len(shown)
    caption = f"{left_out} more in --json/--sarif/--html" if left_out else None
    table = Table(title="not compared", caption=caption)
    for column in ("left", "right", "not compared: reason"):
        table.add_column(column, overflow="fold")
    for pair in shown:
        table.add_row(_side(pair.left), _side(pair.right), cell(pair.reason, limit=600))
    return table


def _side(site: Place) -> Text:
    """Name, then ``file:line (own tests)`` on a line of its own; both plain text."""
    from guardrail.audit import Site

    where = f"{site.file}:{site.line}"
    if isinstance(site, Site):
        where += f" ({site.tests})"
    return Text.assemble(cell(site.qualified_name), "\n", cell(where, "dim"))
