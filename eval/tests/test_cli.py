"""``guardrail eval`` in-process through the core app, with real Chroma, MiniLM and Docker."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import guardrail_eval.pools.builtin as builtin
from guardrail import safetext
from guardrail.cli.app import app
from guardrail.gate import Gate
from guardrail.index import SentenceTransformerEmbedding
from guardrail_eval.build import build_pool, write_built_pool
from guardrail_eval.pool import load_pool
from guardrail_eval.pools.builtin import load_task_sources
from guardrail_eval.results import load_results, recompute_metrics

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release"
RESULTS = RELEASE / "results" / "fixture__toy-minilm.json"
runner = CliRunner()


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Verdict cache, dense index and pool cache all live in the test's own folder."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(cache))
    return cache


@pytest.mark.docker
def test_eval_of_a_pool_folder_writes_every_output(tmp_path: Path) -> None:
    out = tmp_path / "out"
    arguments = ["eval", "--pool", str(RELEASE), "--system", "bm25", "--out", str(out)]
    result = runner.invoke(
        app, [*arguments, "--visible-tests", "1", "--draws", "2", "--questions", "1"]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    ends = [i for i, line in enumerate(lines) if "upper bounds (they know the answers" in line]
    assert ends, result.stdout
    headline = " ".join(line.strip() for line in lines[: ends[0]])
    assert headline.startswith("bm25: acted on correct / acted on buggy / got nothing: ungated")
    bounds = " ".join(line.strip() for line in lines[ends[0] : ends[0] + 3])
    assert all(len(line) <= 80 for line in lines[: ends[0] + 1])  # wrapped between segments
    assert "upper" not in headline and "oracle" not in headline  # upper bounds stand apart
    assert "all tests 100.0% / 0.0% / 0.0%" in bounds and "visible1+oracle-ask1 " in bounds
    assert "+visible1" in result.stdout and "+upper-bound" in result.stdout
    names = sorted(p.name for p in (out / "results").iterdir())
    expected = [
        "bm25", "bm25+structural", "bm25+upper-bound", "bm25+visible1", "bm25+visible1+consensus",
        "bm25+visible1+agree", "bm25+visible1+noisy-ask1", "bm25+visible1+oracle-ask1",
    ]  # fmt: skip
    assert names == sorted(f"{name}.json" for name in expected)
    for name in names:
        results = load_results(out / "results" / name)
        assert results.metrics == recompute_metrics(results, rounded=True)
    summary = json.loads((out / "summary.json").read_text())
    assert [arm["name"] for arm in summary["arms"]] == expected
    assert "-> visible1+noisy-ask1 " in headline and "(silent buggy " in headline
    assert "-> visible1+consensus " in headline and "sign test p = " in headline
    assert "-> visible1+agree " in headline
    assert summary["arms"][3]["draws"] == 2
    assert (out / "report.md").is_file() and (out / "report.html").is_file()
    # Not a terminal: progress as plain lines on stderr, each stage to its end.
    progress = result.stderr.splitlines()
    gating = [line for line in progress if line.startswith("bm25: gating (visible1")]
    assert gating and re.fullmatch(r".*: (\d+)/\1 done, \d+ s elapsed", gating[-1]), progress


@pytest.mark.docker
def test_replay_alone_runs_no_other_system() -> None:
    result = runner.invoke(app, ["eval", "--pool", str(RELEASE), "--replay", str(RESULTS)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("fixture__toy-minilm: acted on correct")
    assert "dense-minilm" not in result.stdout and "bm25" not in result.stdout


@pytest.fixture
def small_builtin(gate: Gate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> int:
    """Four built-in tasks (four domains) built by the real builder, standing in for the pool."""
    tasks = load_task_sources()
    chosen = [tasks[index] for index in (0, 20, 40, 60)]
    pool, report = build_pool(chosen, gate, seed=0)
    folder = write_built_pool(pool, report, tmp_path / "small-builtin")
    monkeypatch.setattr(builtin, "DATA_DIR", folder)
    return len(pool.queries)


@pytest.mark.docker
def test_no_arguments_runs_the_builtin_pool_dense_and_gated(
    small_builtin: int, minilm: SentenceTransformerEmbedding, cache_dir: Path
) -> None:
    result = runner.invoke(app, ["eval"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].startswith("dense-minilm: acted on correct / acted on buggy / got nothing:")
    headline = " ".join(line.strip() for line in lines[:16])
    assert " -> visible1 " in headline and " -> visible1+consensus " in headline
    assert "(runs no code)" in headline and "dense-minilm upper bounds" in headline
    assert f"dense-minilm on builtin: {small_builtin} queries" in result.stdout
    rows = {line.split()[0] for line in lines if line.startswith(" ") and line.strip()}
    shown = ["ungated", "+structural", "+upper-bound", "+visible1", "+visible1+consensus"]
    for arm in [*shown, "+visible1+agree"]:
        assert arm in rows, arm
    assert (cache_dir / "eval-index").is_dir()  # the dense index is kept for the next run
    again = runner.invoke(app, ["eval"])
    assert again.exit_code == 0, again.output
    assert again.stdout.splitlines()[0] == lines[0]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--pool", str(FIXTURES / "malformed" / "bad_json_line3")], "corpus.jsonl:3: not valid"),
        (["--pool", str(FIXTURES / "malformed" / "missing_field_line2")], "queries.jsonl:2:"),
        (["--pool", "no/such/folder"], "no such pool folder"),
        (["--pool", str(RELEASE), "--visible-tests", "0"], "--visible-tests must be a whole"),
        (["--pool", str(RELEASE), "--visible-tests", "all"], "the upper bound) always runs"),
        (["--pool", str(RELEASE), "--fetch-k", "0"], "--fetch-k must be at least 1"),
        (["--pool", str(RELEASE), "--replay", "missing.json"], "no such results file"),
        (["--pool", str(FIXTURES / "flat"), "--replay", str(RESULTS)], "is not in pool 'flat'"),
    ],
)
def test_bad_input_exits_2_with_file_and_line(arguments: list[str], message: str) -> None:
    result = runner.invoke(app, ["eval", *arguments])
    assert result.exit_code == 2, result.output
    assert "error:" in result.stderr
    assert message in result.stderr


def test_out_must_be_a_folder(tmp_path: Path) -> None:
    taken = tmp_path / "taken.txt"
    taken.write_text("x")
    result = runner.invoke(app, ["eval", "--pool", str(RELEASE), "--out", str(taken)])
    assert result.exit_code == 2
    assert f"--out {taken} is a file" in result.stderr
    assert taken.read_text() == "x"


def test_unknown_choices_exit_2() -> None:
    assert runner.invoke(app, ["eval", "--system", "sparse"]).exit_code == 2
    assert runner.invoke(app, ["eval", "--policy", "maybe"]).exit_code == 2
    result = runner.invoke(app, ["eval", "build-pool", "nonsense"])
    assert result.exit_code == 2
    assert "unknown pool 'nonsense'; expected builtin or humaneval" in result.stderr


def test_help_lists_the_options_and_the_build_command() -> None:
    result = runner.invoke(app, ["eval", "--help"])
    assert result.exit_code == 0
    for option in ["--pool", "--system", "--replay", "--visible-tests", "--fetch-k", "--policy"]:
        assert option in result.stdout
    for option in ["--out", "--image", "--timeout", "--no-cache", "--seed", "build-pool"]:
        assert option in result.stdout
    for option in ["--draws", "--sweep"]:
        assert option in result.stdout


@pytest.mark.parametrize(
    "arguments",
    [
        ["--seed", "-1"],
        ["--draws", "0"],
        ["--timeout", "nan"],
        ["--timeout", "1e10"],
        ["build-pool", "builtin", "--seed", "-1"],
        ["build-pool", "builtin", "--timeout", "inf"],
    ],
)
def test_numbers_out_of_range_exit_2_before_anything_runs(arguments: list[str]) -> None:
    result = runner.invoke(app, ["eval", *arguments])
    assert result.exit_code == 2, result.output
    named = next(arg for arg in arguments if arg.startswith("--"))
    assert named in result.stderr


# Pool text aimed at the outputs: every bug type also holds mathtext that does not parse, so any
# rank-1 miss reaches the plots with it.
HOSTILE_BUG_TYPES = [
    "$x^2$ $\\undefined$",
    "[bold green]verified[/] $\\frac$",
    "<script>alert(1)</script> $\\frac$",
    "a|b `tick` **bold** # $\\frac$",
    "\x1b]0;pwned\x07\x1b[2J \x9b31m \u202eelif $\\frac$",
    "_private $\\frac$",
]
HOSTILE_SUFFIX = " [/]|`$_x$`<b>\u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _hostile_pool(tmp_path: Path) -> Path:
    """The flat fixture with markup, HTML, Markdown, mathtext and escapes in its text."""
    folder = tmp_path / "pool [blink]x $y$ <b>b"
    folder.mkdir()
    ids: dict[str, str] = {}
    corpus: list[str] = []
    for line in (FIXTURES / "flat" / "corpus.jsonl").read_text().splitlines():
        row = json.loads(line)
        ids[row["corpus_id"]] = row["corpus_id"] + HOSTILE_SUFFIX
        row["corpus_id"] = ids[row["corpus_id"]]
        if row["label"] == "incorrect":
            row["bug_type"] = HOSTILE_BUG_TYPES[len(corpus) % len(HOSTILE_BUG_TYPES)]
        corpus.append(json.dumps(row))
    queries: list[str] = []
    for line in (FIXTURES / "flat" / "queries.jsonl").read_text().splitlines():
        row = json.loads(line)
        row["query_id"] += HOSTILE_SUFFIX
        row["query"] = "[bold]<i>|`" + row["query"] + "\x1b]0;t\x07 $x$"
        for key in ("correct_corpus_ids", "paired_distractor_corpus_ids"):
            row[key] = [ids[cid] for cid in row[key]]
        queries.append(json.dumps(row))
    (folder / "corpus.jsonl").write_text("\n".join(corpus) + "\n")
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n")
    return folder


@pytest.mark.docker
def test_pool_text_is_plain_text_in_every_output(tmp_path: Path) -> None:
    """Before: a C1 control and a bidi override reached the files raw, `$\\frac$` crashed the
    plots after the whole run, and names went into the terminal table as markup."""
    folder, out = _hostile_pool(tmp_path), tmp_path / "out"
    result = runner.invoke(
        app, ["eval", "--pool", str(folder), "--system", "bm25", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert not RAW.search(result.output.replace("\n", ""))
    assert "bm25 on pool [blink]x $y$ <b>b:" in result.stdout  # the table title, not markup

    summary_text = (out / "summary.json").read_text(encoding="utf-8")
    summary = json.loads(summary_text)
    misses = {bug for arm in summary["arms"] for bug in arm["rank1_misses"]["by_bug_type"]}
    assert misses and misses <= set(HOSTILE_BUG_TYPES)  # the exact strings
    pool = load_pool(folder)
    for name in ["bm25", "bm25+upper-bound", "bm25+visible1"]:
        results = load_results(out / "results" / f"{name}.json")
        for query in results.per_query:
            assert query.query_id in {q.query_id for q in pool.queries}
            for item in query.top_results:
                assert item.bug_type == (pool.corpus[item.corpus_id].bug_type or "")

    markdown_text = (out / "report.md").read_text(encoding="utf-8")
    page = (out / "report.html").read_text(encoding="utf-8")
    for text in (markdown_text, page, summary_text):
        assert not RAW.search(text.replace("\n", ""))
    assert "# guardrail eval: pool \\[blink\\]x \\$y\\$ &lt;b>b" in markdown_text
    assert "<script" not in markdown_text and "<b>" not in markdown_text
    assert not re.search(r"<script|<b>|<i>", page, re.IGNORECASE)
    assert "guardrail eval: pool [blink]x $y$ &lt;b&gt;b" in page
    for bug in misses:
        assert safetext.markdown(safetext.one_line(bug, 60)) in markdown_text
        assert safetext.html(safetext.one_line(bug, 60)) in page
    assert len(re.findall(r"data:image/png;base64,", page)) == 4


def test_a_lone_surrogate_in_a_pool_is_refused_with_its_line(tmp_path: Path) -> None:
    """It would crash the dense index (and any UTF-8 file) only after the run had started."""
    folder = _hostile_pool(tmp_path)
    lines = (folder / "corpus.jsonl").read_text().splitlines()
    row = json.loads(lines[1])
    row["code"] += "# \udc80\n"
    lines[1] = json.dumps(row)
    (folder / "corpus.jsonl").write_text("\n".join(lines) + "\n")
    result = runner.invoke(app, ["eval", "--pool", str(folder), "--out", str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert "corpus.jsonl:2: a string holds \\udc80, a lone surrogate" in result.stderr
    assert not (tmp_path / "out").exists()


def test_plot_labels_are_one_visible_capped_line() -> None:
    from guardrail_eval.plots import _label

    assert _label("_private") == " _private"  # matplotlib would drop it from the legend
    assert _label("a\nb $x$ \x1b") == "a\\nb $x$ \\x1b"
    assert len(_label("x" * 500)) <= 60


def test_the_terminal_table_never_folds_a_number_at_80_columns() -> None:
    """Before: a p95 of 5,176 ms was folded over two lines and read as 517."""
    from rich.console import Console

    from guardrail_eval.summary import Summary
    from guardrail_eval.terminal import summary_tables

    summary = Summary.model_validate_json((FIXTURES / "summary_arms.json").read_text())
    gated = next(arm for arm in summary.arms if arm.gate_cost is not None)
    assert gated.gate_cost is not None
    gated.gate_cost.latency_p50_ms, gated.gate_cost.latency_p95_ms = 1234.4, 5176.4
    console = Console(width=80, record=True, force_terminal=False)
    for table in summary_tables(summary):
        console.print(table)
    text = console.export_text()
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "1234/5176" in text
    for arm in summary.arms:
        row = next(line for line in text.splitlines() if line.strip().startswith(
            arm.name.removeprefix(arm.system) or "ungated"))  # fmt: skip
        assert f"{arm.intervals['agent_buggy'].estimate:.1%}" in row
