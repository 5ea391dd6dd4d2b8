"""``guardrail index PATH``: split Python files into function-level snippets and store them.

Also home of the options that say where an index lives, shared with ``guardrail search``.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from guardrail.cli.common import EXIT_INTERRUPTED, console, err_console, fail, reporting_errors
from guardrail.cli.progress import progress_hook
from guardrail.safetext import clean, dumps_json, one_line

if TYPE_CHECKING:
    from guardrail.index import AddReport, CodeIndex, Snippet, TreeSplit

CollectionOption = Annotated[
    str,
    typer.Option(
        "--collection", envvar="GUARDRAIL_COLLECTION", help="Name of the Chroma collection."
    ),
]
IndexDirOption = Annotated[
    Path | None,
    typer.Option(
        "--path",
        help="Directory of a local index (default: $GUARDRAIL_INDEX_DIR, else the user data dir).",
    ),
]
ChromaUrlOption = Annotated[
    str | None,
    typer.Option(
        "--chroma-url",
        help="A Chroma server, e.g. http://127.0.0.1:8000 (default: $GUARDRAIL_CHROMA_URL).",
    ),
]
EmbeddingOption = Annotated[
    str,
    typer.Option(
        "--embedding",
        envvar="GUARDRAIL_EMBEDDING",
        help="minilm (bundled, offline), chroma-default, or a sentence-transformers model"
        " name or directory. Use the same one to index and to search.",
    ),
]


ExcludeOption = Annotated[
    list[str] | None,
    typer.Option(
        "--exclude",
        metavar="GLOB",
        help="Leave out files and folders matching GLOB, relative to PATH (repeatable)."
        " Gitignore-like: '*' stays within a folder, '**' spans folders, a GLOB without '/'"
        " matches at any depth, a matching folder drops everything in it:"
        " --exclude '**/fixtures/**' --exclude '*_pb2.py'.",
    ),
]
IncludeTestsOption = Annotated[
    bool,
    typer.Option(
        "--include-tests",
        help="Also index tests, which are left out by default: folders named tests/ or"
        " test/, and test_*.py, *_test.py, conftest.py files.",
    ),
]


def register(app: typer.Typer) -> None:
    """Add the ``index`` command to ``app``."""
    app.command("index")(index)


def index(  # noqa: PLR0917 - Typer maps parameters to options; callers never pass them positionally
    path: Annotated[Path, typer.Argument(help="A directory of Python files, or one file.")],
    collection: CollectionOption = "guardrail",
    index_dir: IndexDirOption = None,
    chroma_url: ChromaUrlOption = None,
    embedding: EmbeddingOption = "minilm",
    exclude: ExcludeOption = None,
    include_tests: IncludeTestsOption = False,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the summary as JSON on stdout.")
    ] = False,
) -> None:
    """Index every function and method of the Python files under PATH.

    Doctest examples in a function's docstring become its stored tests. Re-indexing replaces
    the snippets of changed files and leaves unchanged ones alone; files now excluded, deleted
    or no longer parsing are removed from the index. Files that cannot be used are skipped and
    listed with their reason, and the others indexed: symbolic links (never followed), FIFOs,
    sockets and devices (never opened), files too large, too deeply nested or that do not parse.
    Exit code 2 on bad input (a single PATH file that does not parse, a bad GLOB).
    """
    with reporting_errors():
        tree = split_path(path, exclude=exclude, include_tests=include_tests)
        code_index = open_index(collection, index_dir, chroma_url, embedding)
        report = store_tree(code_index, path, tree)
    if as_json:
        typer.echo(dumps_json(_summary(path, code_index, tree, report), ascii_only=True))
    else:
        _print_summary(path, code_index, tree, report)


def split_path(path: Path, *, exclude: list[str] | None, include_tests: bool) -> TreeSplit:
    """The snippets of the tree at ``path``, before any index is opened; a lone PATH file that
    does not parse is exit 2. Shared with ``guardrail audit PATH``."""
    from guardrail.index import split_tree

    tree = split_tree(path, exclude=exclude or (), include_tests=include_tests)
    if path.is_file() and tree.skipped.count:
        fail(str(tree.skipped.files[0]))
    return tree


def store_tree(code_index: CodeIndex, path: Path, tree: TreeSplit) -> AddReport:
    """Make ``code_index`` hold exactly ``tree`` for ``path``, with progress; all or nothing
    (`CodeIndex.replace_files`): Ctrl-C while embedding exits 130 and changes nothing."""
    files = {**_gone_files(code_index, path, tree), **tree.files}
    try:
        with progress_hook("embedding new and changed snippets", "snippets") as on_progress:
            report = code_index.replace_files(files, on_progress=on_progress)
    except KeyboardInterrupt:
        err_console.print(
            Text(
                f"interrupted: nothing was written; collection {code_index.name!r} is as it was"
                " before this run"
            )
        )
        raise typer.Exit(EXIT_INTERRUPTED) from None
    code_index.record_roots([tree.root])
    return report


def _gone_files(code_index: CodeIndex, path: Path, tree: TreeSplit) -> dict[str, list[Snippet]]:
    """Indexed files under ``path`` that are deleted or no longer parse: their snippets go.

    Otherwise they would keep being served with a file and line range that are no longer true.
    """
    root = path.resolve()
    return {
        file: []
        for file in code_index.files()
        if file not in tree.files and (Path(file) == root or root in Path(file).parents)
    }


def open_index(
    collection: str,
    index_dir: Path | None,
    chroma_url: str | None,
    embedding: str,
    *,
    create: bool = True,
    fast_queries: bool | None = None,
) -> CodeIndex:
    """The `CodeIndex` the location options name, with the embedding ``--embedding`` names.

    Readers pass ``create=False``: a missing index or collection is then an error (exit 2)
    and nothing is created. ``fast_queries``: see `guardrail.index.SentenceTransformerEmbedding`.
    """
    if index_dir is not None and chroma_url is not None:
        fail("give either --path (a local index) or --chroma-url (a server), not both")
    from guardrail.index import CodeIndex, load_embedding

    function = load_embedding(embedding, fast_queries=fast_queries)
    return CodeIndex(
        collection, path=index_dir, url=chroma_url, embedding_function=function, create=create
    )


def skip_summary(tree: TreeSplit) -> dict[str, Any]:
    """The skips of a split, for ``--json`` (shared with ``guardrail audit``): counts by kind,
    then each skipped file and function with its reason."""
    skipped = tree.skipped
    return {
        "count": skipped.count,
        "by_kind": skipped.by_kind(),
        "files": [item.model_dump() for item in skipped.files],
        "functions": [item.model_dump() for item in skipped.functions],
    }


def _summary(
    path: Path, code_index: CodeIndex, tree: TreeSplit, report: AddReport
) -> dict[str, Any]:
    return {
        "path": str(path),
        "collection": code_index.name,
        "location": code_index.location,
        "in_collection": code_index.count(),
        "files": {
            "read": len(tree.files),
            "skipped": tree.skipped.count,
            "excluded": tree.excluded,
        },
        "snippets": {
            "found": len(tree.snippets),
            "added": report.added,
            "updated": report.updated,
            "unchanged": report.unchanged,
            "removed": report.removed,
        },
        "skipped": skip_summary(tree),
    }


def print_skips(tree: TreeSplit | None) -> None:
    """Every skipped file and function with its reason, as plain text (shared with ``audit``,
    whose ``tree`` is None when it audits a collection: nothing to print)."""
    if tree is None:
        return
    skipped = tree.skipped
    if skipped.count:
        kinds = ", ".join(f"{count} {kind}" for kind, count in skipped.by_kind().items())
        console.print(f"skipped ({kinds}):", highlight=False)
        for item in skipped.files:
            console.print(Text("  " + clean(str(item))), highlight=False, soft_wrap=True)
    if skipped.functions:
        console.print(f"functions left out or untested: {len(skipped.functions)}", highlight=False)
        for item in skipped.functions:
            console.print(Text("  " + clean(str(item))), highlight=False, soft_wrap=True)


def _print_summary(path: Path, code_index: CodeIndex, tree: TreeSplit, report: AddReport) -> None:
    """Counts, then every skipped file; paths and names are printed as plain text, never markup
    (a file may be named ``[bold]x.py`` or carry escape sequences)."""
    found = len(tree.snippets)
    console.print(
        Text.assemble(
            "Indexed ",
            (one_line(str(path)), "bold"),
            " into collection ",
            (one_line(code_index.name), "bold"),
            f" ({one_line(code_index.location)}): {code_index.count()} snippets in the collection.",
        ),
        highlight=False,
    )
    console.print(
        f"  files     {len(tree.files)} read, {tree.skipped.count} skipped,"
        f" {tree.excluded} excluded\n"
        f"  snippets  {found} found: {report.added} added, {report.updated} updated,"
        f" {report.unchanged} unchanged; {report.removed} old snippets removed",
        highlight=False,
    )
    print_skips(tree)
