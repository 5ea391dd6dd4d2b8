"""``guardrail audit retriever``: the eval, on the user's own LangChain or LlamaIndex retriever.

The command parses its options and hands the eval a `guardrail_eval.custom.CustomSystem` (plus,
with ``--system``, the eval's own systems to compare against); everything else is the eval's
own code (`guardrail_eval.cli.run_and_report`), so the numbers mean what ``guardrail eval``'s
mean. The core CLI mounts it as ``guardrail audit retriever`` through the
``guardrail.audit_commands`` entry-point group (`guardrail.cli.plugins`); the eval's heavy
modules load only when it runs.

Exit codes: those of ``guardrail eval`` (0 done, 2 bad input: also a ``--retriever`` that cannot
be imported, called or used, or that raised; 3 sandbox unavailable; 4 results incomplete).
"""

from __future__ import annotations

import dataclasses
import sys
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from guardrail.cli.common import fail, warn
from guardrail.cli.options import ImageOption, NoCacheOption, RuntimeOption, TimeoutOption
from guardrail.gate import Policy
from guardrail_eval.options import FetchKOption, PolicyOption, SeedOption, VisibleTestsOption

if TYPE_CHECKING:
    from guardrail_eval.pool import Pool
    from guardrail_eval.systems import RetrievalSystem


def retriever(  # noqa: PLR0917 - Typer maps parameters to options; callers never pass them positionally
    spec: Annotated[
        str,
        typer.Option(
            "--retriever",
            help="module:factory, imported from the current directory or sys.path.",
        ),
    ],
    pool: Annotated[
        str, typer.Option(help="builtin (shipped), humaneval (built once, cached), or a folder.")
    ] = "builtin",
    framework: Annotated[
        str | None,
        typer.Option(help="langchain or llamaindex (default: from the factory's annotations)."),
    ] = None,
    name: Annotated[
        str | None,
        typer.Option(help="The retriever's name in reports and file names (default: factory's)."),
    ] = None,
    system: Annotated[
        list[str] | None,
        typer.Option(
            help="Also run the eval's own system on the same pool to compare: dense (Chroma +"
            " offline MiniLM), bm25 or all. Repeatable."
        ),
    ] = None,
    visible_tests: VisibleTestsOption = None,
    fetch_k: FetchKOption = 10,
    policy: PolicyOption = Policy.RERANK,
    out: Annotated[
        Path | None,
        typer.Option(help="Write results/, summary.json, report.md and report.html to DIR."),
    ] = None,
    image: ImageOption = None,
    timeout: TimeoutOption = 5.0,
    runtime: RuntimeOption = None,
    no_cache: NoCacheOption = False,
    seed: SeedOption = 0,
) -> None:
    """Run your own retriever through the eval, ungated and gated, with its metrics.

    The factory is called once, as factory(documents, k), and returns a retriever.
    Given LangChain Documents (page_content = the code): a langchain_core
    BaseRetriever. Given LlamaIndex TextNodes: a llama_index.core BaseRetriever.
    Each document carries metadata["corpus_id"], which every result must keep;
    k is how many results a query should return. The framework is read from the
    factory's annotations, or given with --framework.
    """
    from guardrail_eval.asking import DEFAULT_QUESTIONS
    from guardrail_eval.cli import reporting_eval_errors, run_and_report
    from guardrail_eval.custom import CustomSystem, Framework, load_factory
    from guardrail_eval.runner import EvalSettings, parse_visible_tests
    from guardrail_eval.selection import SystemChoice, build_systems, default_index_dir

    with reporting_eval_errors():
        # The arms of a default `guardrail eval`, with this command's seed for the draws too.
        settings = EvalSettings(
            fetch_k=fetch_k, policy=policy, questions=DEFAULT_QUESTIONS, seed=seed
        )
        if visible_tests:  # else the eval's own default arms
            parsed = tuple(parse_visible_tests(v) for v in visible_tests)
            settings = dataclasses.replace(settings, visible_tests=parsed)
        chosen_framework = (
            _choice(Framework, "--framework", framework) if framework is not None else None
        )
        baselines = [_choice(SystemChoice, "--system", value) for value in system or []]
        # As `python -m` and uvicorn do: the user's module is found in the current directory.
        if str(Path.cwd()) not in sys.path:
            sys.path.insert(0, str(Path.cwd()))
        factory = load_factory(spec, chosen_framework)
        custom = CustomSystem(factory, k=settings.depth, name=name)

        def systems(chosen: Pool) -> list[RetrievalSystem]:
            if not baselines:
                return [custom]
            index_dir = default_index_dir()
            return [custom, *build_systems(chosen, baselines, seed=seed, index_dir=index_dir)]

        run_and_report(
            pool,
            systems,
            settings,
            out,
            image=image,
            timeout=timeout,
            runtime=runtime,
            no_cache=no_cache,
            seed=seed,
        )
        if custom.shortfall is not None:
            query_id, got, wanted = custom.shortfall
            warn(
                f"{custom.name} returned {got} snippets for query {query_id!r} (and maybe"
                f" others), not {wanted}: exec@k and the gate saw only those; does the factory"
                f" pass k={custom.k} on to the retriever?"
            )


_Choice = TypeVar("_Choice", bound=StrEnum)


def _choice(kind: type[_Choice], option: str, value: str) -> _Choice:
    """The enum member ``value`` names; checked here because the enums load with the eval."""
    names = [member.value for member in kind]
    if value not in names:
        fail(f"{option} {value!r}: expected one of {', '.join(names)}")
    return kind(value)
