"""An ``--out`` folder holds one run: earlier outputs only with --force, unknown files never."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail_eval.errors import OutFolderError, OutputError
from guardrail_eval.outputs import check_out_folder, replace_outputs

RELEASE = Path(__file__).parent / "fixtures" / "release"
runner = CliRunner()


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(cache))
    return cache


def earlier_run(out: Path) -> dict[str, str]:
    """An earlier run's outputs (and a temporary its interrupted write left), by path."""
    files = {
        "summary.json": "{}",
        "report.md": "old",
        "report.html": "old",
        "results/bm25.json": "{}",
        "results/bm25+gate-visible1.json": "{}",
        "plots/exec.png": "png",
        ".report.md.k2j4h1x9": "half",
    }
    for name, text in files.items():
        (out / name).parent.mkdir(parents=True, exist_ok=True)
        (out / name).write_text(text, encoding="utf-8")
    return files


def tree(folder: Path) -> dict[str, str]:
    return {
        str(path.relative_to(folder)): path.read_text(encoding="utf-8")
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def test_a_new_or_empty_folder_takes_the_outputs(tmp_path: Path) -> None:
    assert check_out_folder(tmp_path / "new", force=False).earlier == ()
    (tmp_path / "empty").mkdir()
    assert check_out_folder(tmp_path / "empty", force=False).earlier == ()


def test_an_earlier_runs_outputs_are_refused_without_force(tmp_path: Path) -> None:
    before = earlier_run(tmp_path)
    with pytest.raises(OutFolderError, match="holds an earlier run's outputs: ") as caught:
        replace_outputs(tmp_path, {tmp_path / "summary.json": "new"}, force=False)
    assert ".report.md.k2j4h1x9, plots/exec.png, report.html, report.md, results/bm25+gate" in str(
        caught.value
    )
    assert "and 2 more" in str(caught.value)
    assert "--force" in caught.value.hint
    assert tree(tmp_path) == before


def test_force_replaces_the_outputs_and_removes_those_not_rewritten(tmp_path: Path) -> None:
    earlier_run(tmp_path)
    new = {
        tmp_path / "summary.json": '{"version": 3}',
        tmp_path / "report.md": "new",
        tmp_path / "results" / "bm25.json": "{}",
    }
    assert replace_outputs(tmp_path, new, force=True) == list(new)
    # No stale arm next to the new summary, no old plot, no leftover temporary.
    assert tree(tmp_path) == {
        "summary.json": '{"version": 3}',
        "report.md": "new",
        "results/bm25.json": "{}",
    }
    assert not (tmp_path / "plots").exists()


@pytest.mark.parametrize(
    ("unknown", "named"),
    [
        ("notes.txt", "notes.txt"),
        ("results/readme.txt", "results/readme.txt"),
        ("results/old/bm25.json", "results/old"),
        ("data/corpus.jsonl", "data"),
        (".DS_Store", ".DS_Store"),
    ],
)
def test_files_the_eval_does_not_write_are_refused_even_with_force(
    tmp_path: Path, unknown: str, named: str
) -> None:
    before = earlier_run(tmp_path)
    (tmp_path / unknown).parent.mkdir(parents=True, exist_ok=True)
    (tmp_path / unknown).write_text("mine", encoding="utf-8")
    before[unknown] = "mine"
    with pytest.raises(OutFolderError, match="does not write: ") as caught:
        replace_outputs(tmp_path, {tmp_path / "summary.json": "new"}, force=True)
    assert named in str(caught.value)
    assert "--force never deletes" in caught.value.hint
    assert tree(tmp_path) == before


def test_a_symbolic_link_is_never_taken_for_an_output(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.json").write_text("mine", encoding="utf-8")
    out = tmp_path / "out"
    out.mkdir()
    (out / "results").symlink_to(elsewhere)
    with pytest.raises(OutFolderError, match="does not write: results"):
        check_out_folder(out, force=True)
    assert (elsewhere / "keep.json").read_text(encoding="utf-8") == "mine"


def test_a_failed_write_leaves_the_earlier_outputs_as_they_were(tmp_path: Path) -> None:
    before = earlier_run(tmp_path)
    too_long = tmp_path / "results" / ("x" * 300 + ".json")  # no file system takes the name
    files = {tmp_path / "summary.json": "new", too_long: "{}"}
    with pytest.raises(OutputError, match="cannot write"):
        replace_outputs(tmp_path, files, force=True)
    assert tree(tmp_path) == before  # nothing renamed, nothing removed, no temporary left


def test_the_cli_refuses_an_earlier_run_before_anything_runs(
    tmp_path: Path, cache_dir: Path
) -> None:
    out = tmp_path / "out"
    out.mkdir()
    earlier_run(out)
    arguments = ["eval", "--pool", str(RELEASE), "--system", "bm25", "--out", str(out)]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 2, result.output
    assert f"error: --out {out} holds an earlier run's outputs" in result.stderr
    (out / "notes.txt").write_text("mine", encoding="utf-8")
    result = runner.invoke(app, [*arguments, "--force"])
    assert result.exit_code == 2, result.output
    assert "notes.txt" in result.stderr
    assert not cache_dir.exists()  # no verdict cache opened, no index built: nothing ran


@pytest.mark.docker
def test_a_forced_rerun_leaves_no_stale_result_next_to_the_new_summary(tmp_path: Path) -> None:
    out = tmp_path / "out"
    arguments = ["eval", "--pool", str(RELEASE), "--system", "bm25", "--out", str(out)]
    arguments += ["--draws", "1"]
    first = runner.invoke(app, [*arguments, "--questions", "1"])
    assert first.exit_code == 0, first.output
    assert len(list((out / "results").iterdir())) == 8  # ... and noisy-ask1, oracle-ask1
    again = runner.invoke(app, [*arguments, "--questions", "0"])
    assert again.exit_code == 2, again.output
    forced = runner.invoke(app, [*arguments, "--questions", "0", "--force"])
    assert forced.exit_code == 0, forced.output
    arms = ["bm25", "bm25+structural", "bm25+upper-bound", "bm25+visible1"]
    arms += ["bm25+visible1+consensus", "bm25+visible1+agree"]
    names = sorted(path.name for path in (out / "results").iterdir())
    assert names == sorted(f"{arm}.json" for arm in arms)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    assert [arm["name"] for arm in summary["arms"]] == arms
    assert sorted(path.name for path in out.iterdir()) == [
        "report.html",
        "report.md",
        "results",
        "summary.json",
    ]
