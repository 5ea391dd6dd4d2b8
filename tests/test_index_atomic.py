"""An index run is all or nothing: interrupted or failed while embedding, the collection is as it
was before the run; its progress is shown from the first second, on a terminal or not.

Real Chroma (embedded) and the real MiniLM. The interrupt is a real SIGINT sent to a real
``guardrail index`` process after its first progress line.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any, cast

import pytest

from guardrail.cli import common, progress
from guardrail.index import CodeIndex, Snippet

GUARDRAIL = [sys.executable, "-c", "from guardrail.cli.app import main; main()"]


def write_tree(root: Path, files: int, functions: int, version: int) -> None:
    package = root / "bulk"
    package.mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    for f in range(files):
        body = "".join(
            f"def f{f}_{n}(x):\n    '''Add {n + version} to x, version {version}.'''\n"
            f"    return x + {n + version}\n\n\n"
            for n in range(functions)
        )
        (package / f"m{f}.py").write_text(body, encoding="utf-8")


def contents(index: CodeIndex) -> dict[str, str]:
    return {snippet.index_id: snippet.code for snippet in index.snippets()}


class InterruptAfter:
    """The session's MiniLM, raising KeyboardInterrupt on its ``calls``-th call (what a Ctrl-C
    in the middle of embedding raises); a Chroma embedding function like any other."""

    def __init__(self, real: object, calls: int) -> None:
        self.real, self.left = real, calls

    def __call__(self, input: list[str]) -> object:
        self.left -= 1
        if self.left == 0:
            raise KeyboardInterrupt
        return self.real(input)  # type: ignore[operator]

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


def test_an_interrupt_while_embedding_leaves_the_collection_as_it_was(
    tmp_path: Path, minilm: Any
) -> None:
    first = [Snippet(code=f"def a{n}():\n    return {n}\n", file=f"old{n}.py") for n in range(5)]
    index = CodeIndex("atomic", path=tmp_path / "index", embedding_function=minilm)
    index.add(first)
    before = contents(index)
    interrupting = CodeIndex(
        "atomic",
        path=tmp_path / "index",
        embedding_function=cast("Any", InterruptAfter(minilm, 3)),  # forwards the protocol
    )
    new = [Snippet(code=f"def b{n}():\n    return {n}\n", file=f"new{n}.py") for n in range(200)]
    files = {"old0.py": [], **{s.path: [s] for s in new}}
    with pytest.raises(KeyboardInterrupt):
        interrupting.replace_files(files)  # 2 of 4 chunks embedded, then the interrupt
    assert (
        contents(CodeIndex("atomic", path=tmp_path / "index", embedding_function=minilm)) == before
    )


def test_ctrl_c_during_guardrail_index_changes_nothing(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write_tree(tree, files=4, functions=5, version=1)
    env = {**os.environ, "GUARDRAIL_INDEX_DIR": str(tmp_path / "index"),
           "GUARDRAIL_CACHE_DIR": str(tmp_path / "cache")}  # fmt: skip
    subprocess.run([*GUARDRAIL, "index", str(tree)], env=env, check=True, capture_output=True)
    index = CodeIndex("guardrail", path=tmp_path / "index")
    before = contents(index)
    assert len(before) == 20
    write_tree(tree, files=40, functions=25, version=2)  # 1,000 snippets, all changed or new
    run = subprocess.Popen(
        [*GUARDRAIL, "index", str(tree)], env=env, stderr=subprocess.PIPE, text=True
    )
    assert run.stderr is not None
    line = run.stderr.readline()  # piped: plain progress lines, the first at once
    assert line.startswith("embedding new and changed snippets: 0/1000 snippets, "), line
    time.sleep(1.0)  # well inside the embedding of 1,000 snippets
    run.send_signal(signal.SIGINT)
    rest = run.communicate(timeout=120)[1]
    assert run.returncode == 130, rest
    assert "interrupted: nothing was written; collection 'guardrail' is as it was before" in rest
    assert contents(CodeIndex("guardrail", path=tmp_path / "index")) == before


def test_plain_progress_lines_say_count_elapsed_and_time_left(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = iter([0.0, 0.0, 2.0, 3.0, 14.0, 30.0])
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(common.err_console, "_force_terminal", False)
    with progress.progress_hook("embedding", "snippets") as hook:  # clock 0.0: started
        hook(0, 100)  # 0.0: the first line, at once
        hook(10, 100)  # 2.0: within 10 s of the last line: quiet
        hook(20, 100)  # 3.0: quiet
        hook(60, 100)  # 14.0: a line; 50 done in the 12 s since the first count
        hook(100, 100)  # 30.0: the last line, always
    lines = capsys.readouterr().err.splitlines()
    assert lines == [
        "embedding: 0/100 snippets, 0 s elapsed",
        "embedding: 60/100 snippets, 14 s elapsed, about 10 s left",
        "embedding: 100/100 snippets, 30 s elapsed",
    ]


def test_staged_progress_gives_each_stage_its_own_lines(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    clock = iter([0.0, 0.0, 1.0, 1.0, 2.0])
    monkeypatch.setattr(time, "monotonic", lambda: next(clock))
    monkeypatch.setattr(common.err_console, "_force_terminal", False)
    with progress.stage_progress("done") as hook:
        hook("judging", 0, 0)  # nothing to do: no line, no clock read
        hook("checking labels", 0, 4)  # 0.0 starts the stage, 0.0 its first line
        hook("bm25: gating", 0, 2)  # 1.0, 1.0: a stage of its own, its own first line
        hook("checking labels", 4, 4)  # 2.0: the end of a stage, always
    assert capsys.readouterr().err.splitlines() == [
        "checking labels: 0/4 done, 0 s elapsed",
        "bm25: gating: 0/2 done, 0 s elapsed",
        "checking labels: 4/4 done, 2 s elapsed",
    ]


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0.4, "0 s"), (59.6, "1 min 00 s"), (185, "3 min 05 s"), (3725, "1 h 02 min")],
)
def test_durations_read_at_a_glance(seconds: float, shown: str) -> None:
    assert progress.duration(seconds) == shown
