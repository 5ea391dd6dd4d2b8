"""Progress of long work, always: a Rich bar on a terminal, plain lines on stderr otherwise.

`progress_hook` yields an ``on_progress(done, total)`` hook (`guardrail.index.ProgressHook`);
`stage_progress` an ``on_progress(stage, done, total)`` hook for work in named stages (the
eval: one bar, or one series of lines, per stage).
On a terminal it drives a bar with the count, the time elapsed (from the first second) and the
time left; when stderr is a file or a pipe (CI, ``2> log``) it prints a line such as
``embedding: 640/5000 snippets, 12 s elapsed, about 1 min 20 s left`` at the start, at most
every `PLAIN_EVERY_S` seconds, and at the end, so a log never goes quiet for minutes.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from guardrail.cli.common import err_console

__all__ = ["PLAIN_EVERY_S", "duration", "progress_hook", "stage_progress"]

PLAIN_EVERY_S = 10.0


def duration(seconds: float) -> str:
    """``45 s``, ``3 min 05 s``, ``1 h 02 min``: a duration a person reads at a glance."""
    whole = max(0, round(seconds))
    if whole < 60:
        return f"{whole} s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes} min {secs:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


@contextmanager
def progress_hook(label: str, unit: str) -> Iterator[Callable[[int, int], None]]:
    """``on_progress(done, total)`` for work called ``label`` counted in ``unit`` (plural)."""
    if err_console.is_terminal:
        with _bar(label) as hook:
            yield hook
    else:
        yield _plain(label, unit)


@contextmanager
def stage_progress(unit: str) -> Iterator[Callable[[str, int, int], None]]:
    """``on_progress(stage, done, total)``: a bar per stage on a terminal, else each stage's
    plain lines (as `progress_hook`'s), counted in ``unit``; a stage starts at its first call
    with something to do (a stage of 0 items is never shown)."""
    if err_console.is_terminal:
        with _bars() as add:
            yield _per_stage(add)
    else:
        yield _per_stage(lambda stage: _plain(stage, unit))


def _per_stage(
    start: Callable[[str], Callable[[int, int], None]],
) -> Callable[[str, int, int], None]:
    hooks: dict[str, Callable[[int, int], None]] = {}

    def on_progress(stage: str, done: int, total: int) -> None:
        if stage not in hooks:
            if not total:
                return  # a stage with nothing to do (every verdict cached) shows nothing
            hooks[stage] = start(stage)
        hooks[stage](done, total)

    return on_progress


@contextmanager
def _bar(label: str) -> Iterator[Callable[[int, int], None]]:
    with _bars() as add:
        yield add(label)  # the clock runs from now, before any count


@contextmanager
def _bars() -> Iterator[Callable[[str], Callable[[int, int], None]]]:
    """``add(label)`` starts a bar (count, elapsed, time left) and gives its hook."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        SpinnerColumn,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    progress = Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
        console=err_console,
        transient=True,
    )

    def add(label: str) -> Callable[[int, int], None]:
        task = progress.add_task(label, total=None)

        def on_progress(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total or None)

        return on_progress

    with progress:
        yield add


def _plain(label: str, unit: str) -> Callable[[int, int], None]:
    started = time.monotonic()
    last: list[float] = []  # when the last line was printed
    # The rate is measured from the first count above zero: before it, set-up (loading a
    # model) would make the first estimate several times too long.
    first_done: list[tuple[float, int]] = []

    def on_progress(done: int, total: int) -> None:
        now = time.monotonic()
        if not first_done and done > 0:
            first_done.append((now, done))
        finished = done >= total
        if last and not finished and now - last[0] < PLAIN_EVERY_S:
            return
        last[:] = [now]
        line = f"{label}: {done}/{total} {unit}, {duration(now - started)} elapsed"
        since, base = first_done[0] if first_done else (now, done)
        if not finished and done > base and now > since:
            left = (total - done) * (now - since) / (done - base)
            line += f", about {duration(left)} left"
        err_console.print(line, markup=False, highlight=False, soft_wrap=True)

    return on_progress
