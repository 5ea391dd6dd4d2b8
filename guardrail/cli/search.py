"""``guardrail search QUERY``: retrieve snippets from the index, verify them, verified first."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.text import Text

from guardrail.cli.common import EXIT_NONE_VERIFIED, console, fail, reporting_errors
from guardrail.cli.index import (
    ChromaUrlOption,
    CollectionOption,
    EmbeddingOption,
    IndexDirOption,
)
from guardrail.cli.options import (
    BackendOption,
    ImageOption,
    NoCacheOption,
    RayAddressOption,
    RuntimeOption,
    TimeoutOption,
)
from guardrail.cli.remote import ServerOption, refuse_local_options
from guardrail.cli.search_lines import PIPED_WIDTH, caption, render, row_of, where
from guardrail.gate import GatedCandidate, GateResult, Policy
from guardrail.safetext import dumps_json
from guardrail.spec import Spec

if TYPE_CHECKING:
    from guardrail.sources import SpecSource


def register(app: typer.Typer) -> None:
    """Add the ``search`` command to ``app``."""
    app.command("search")(search)


def search(  # noqa: PLR0917 - Typer maps parameters to options; callers never pass them positionally
    query: Annotated[
        str, typer.Argument(metavar="QUERY", help="What the code should do, in words.")
    ],
    fetch_k: Annotated[
        int,
        typer.Option(
            "--fetch-k",
            min=1,
            metavar="N",
            help="How many snippets to retrieve and verify (default 20: the smallest that"
            " found >= 95% of intended functions in bench/bench_fetch_k.py).",
        ),
    ] = 20,
    k: Annotated[
        int | None,
        typer.Option(
            "-k",
            min=1,
            metavar="N",
            help="How many results to hand over and show (default: --fetch-k); dropped"
            " candidates beyond N are counted, and all are in --json.",
        ),
    ] = None,
    tests: Annotated[
        Path | None,
        typer.Option(
            "--tests",
            "-t",
            metavar="FILE",
            help="Tests for every candidate: a .py file of test statements (leading imports are"
            " setup) or a .json list. Without it, each snippet's stored tests are used.",
        ),
    ] = None,
    entry_point: Annotated[
        str | None,
        typer.Option(help="The function the --tests call (default: inferred from them)."),
    ] = None,
    policy: Annotated[
        Policy,
        typer.Option(
            help="rerank: verified, then unverifiable; filter: verified only;"
            " abstain: nothing unless something verified; agree: as abstain, and nothing when"
            " the verified disagree on an input (the question says what to test)."
        ),
    ] = Policy.RERANK,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    image: ImageOption = None,
    timeout: TimeoutOption = 5.0,
    runtime: RuntimeOption = None,
    backend: BackendOption = None,
    ray_address: RayAddressOption = None,
    no_cache: NoCacheOption = False,
    collection: CollectionOption = "guardrail",
    index_dir: IndexDirOption = None,
    chroma_url: ChromaUrlOption = None,
    embedding: EmbeddingOption = "minilm",
    fast_embedding: Annotated[
        bool,
        typer.Option(
            "--fast-embedding/--no-fast-embedding",
            envvar="GUARDRAIL_FAST_EMBEDDING",
            help="Embed the query with numpy when that gives the model's vectors (MiniLM and"
            " other mean-pooled BERT models): no torch import, ~0.1 s instead of 5-10 s."
            " --no-fast-embedding uses sentence-transformers.",
        ),
    ] = True,
    server: ServerOption = None,
) -> None:
    """Search the index and verify what comes back in the Docker sandbox, verified first.

    Failed candidates are never handed over (they are listed as dropped; candidates the policy
    kept beyond -k are left out). When verified candidates disagree on an input the gate tried,
    the question follows the table, with a test to add for each answer (under --policy agree
    they are withheld, listed as withheld, until a test settles it). Exit code 0 when
    something is handed over, 1 when nothing is, 2 on bad input, 3 when the sandbox is
    unavailable. With --server (or $GUARDRAIL_SERVER), a `guardrail serve` searches its own
    index and judges: the same output and exit codes, in a fraction of the time.
    """
    with reporting_errors():
        if not query.strip():
            fail("the query is empty: say in words what the code should do")
        if entry_point is not None and tests is None:
            fail("--entry-point names the function the --tests call; give --tests too")
        if k is not None and k > fetch_k:
            fail(f"-k {k} asks for more results than --fetch-k {fetch_k} retrieves")
        query_spec = Spec.from_file(tests, entry_point) if tests is not None else None
        if server is not None:
            refuse_local_options(no_cache=no_cache, path=index_dir, chroma_url=chroma_url)
            from guardrail.client import RemoteGate

            with RemoteGate(server) as remote:
                found = remote.search(
                    query, collection=collection, spec=query_spec, fetch_k=fetch_k, policy=policy
                )
            name, result, sources = found.collection, found.result, found.spec_sources
        else:
            name, result, sources = _search_here(
                query,
                query_spec,
                fetch_k,
                policy,
                image,
                timeout,
                runtime,
                no_cache,
                (collection, index_dir, chroma_url, embedding, fast_embedding),
                backend=backend,
                ray_address=ray_address,
            )
    _render(query, name, result, sources, fetch_k, k, as_json)


def _search_here(  # noqa: PLR0917 - the command's own options, passed on
    query: str,
    query_spec: Spec | None,
    fetch_k: int,
    policy: Policy,
    image: str | None,
    timeout: float,
    runtime: str | None,
    no_cache: bool,
    where: tuple[str, Path | None, str | None, str, bool],
    *,
    backend: str | None = None,
    ray_address: str | None = None,
) -> tuple[str, GateResult, list[SpecSource]]:
    """`gated_search` in this process: the index opened here, a sandbox pool of its own."""
    from guardrail.cli.index import open_index
    from guardrail.cli.interrupts import removing_containers_on_signals
    from guardrail.cli.options import build_gate
    from guardrail.searching import gated_search

    collection, index_dir, chroma_url, embedding, fast_embedding = where
    code_index = open_index(
        collection, index_dir, chroma_url, embedding, create=False, fast_queries=fast_embedding
    )
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
        result, sources = gated_search(
            code_index, gate, query, query_spec, fetch_k=fetch_k, policy=policy
        )
    return code_index.name, result, sources


def _render(  # noqa: PLR0917 - one search's answer and how to show it
    query: str,
    collection: str,
    result: GateResult,
    sources: list[SpecSource],
    fetch_k: int,
    k: int | None,
    as_json: bool,
) -> None:
    """Print the search's table (or JSON) and its question; exit 1 when nothing is handed over."""
    handed = list(result.kept[: k or fetch_k])
    kept = {item.retrieval_rank for item in result.kept}
    dropped = [item for item in result.judged if item.retrieval_rank not in kept]
    if as_json:
        payload = {
            "query": query,
            "collection": collection,
            "policy": result.policy.value,
            "fetch_k": fetch_k,
            "k": k or fetch_k,
            "abstained": result.abstained,
            "results": [_row(item, sources, rank) for rank, item in enumerate(handed, 1)],
            "dropped": [_row(item, sources, None) for item in dropped],
            "question": None
            if result.question is None
            else result.question.model_dump(mode="json"),
        }
        typer.echo(dumps_json(payload, ascii_only=True))
    else:
        shown_dropped = dropped[: k or fetch_k]
        rows = [
            row_of(str(rank), item, sources[item.retrieval_rank].value, dropped=False)
            for rank, item in enumerate(handed, 1)
        ]
        rows += [  # verified and not handed over: withheld by ``agree`` (they disagree)
            row_of(
                "withheld" if item.verdict.verified else "dropped",
                item,
                sources[item.retrieval_rank].value,
                dropped=True,
            )
            for item in shown_dropped
        ]
        console.print(
            render(
                "guardrail search: " + query,
                rows,
                caption(result, handed),
                console.width if console.is_terminal else PIPED_WIDTH,
                more_dropped=len(dropped) - len(shown_dropped),
            )
        )
        if result.question is not None:
            # Plain text, never markup: the values and ids in it come from candidates.
            names = {item.candidate.id: where(item.candidate.metadata) for item in result.judged}
            console.print(Text(result.question.render(names)))
    if not handed:
        raise typer.Exit(EXIT_NONE_VERIFIED)


def _row(item: GatedCandidate, sources: list[SpecSource], rank: int | None) -> dict[str, Any]:
    candidate = item.candidate
    return {
        "rank": rank,
        "retrieval_rank": item.retrieval_rank + 1,
        "id": candidate.id,
        "score": candidate.score,
        "spec_source": sources[item.retrieval_rank].value,
        "code": candidate.code,
        "metadata": candidate.metadata,
        "verdict": item.verdict.model_dump(mode="json"),
    }
