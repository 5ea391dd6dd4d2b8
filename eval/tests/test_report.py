"""Summary statistics and the output folder: results files, summary.json, report.md/.html."""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrail.cache import VerdictCache
from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from guardrail_eval.errors import OutputError
from guardrail_eval.pool import load_pool
from guardrail_eval.report import render_html, render_markdown, write_outputs
from guardrail_eval.results import load_results, recompute_metrics
from guardrail_eval.runner import EvalRun, EvalSettings, run_eval
from guardrail_eval.summary import Summary, summarize
from guardrail_eval.systems import BM25System, ReplaySystem, RetrievalSystem

pytestmark = pytest.mark.docker

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release"
RESULTS = RELEASE / "results" / "fixture__toy-minilm.json"
OUTPUTS = [
    "results/bm25.json",
    "results/bm25+gate.json",
    "results/bm25+gate-visible1.json",
    "results/fixture__toy-minilm.json",
    "results/fixture__toy-minilm+gate.json",
    "results/fixture__toy-minilm+gate-visible1.json",
    "summary.json",
    "report.md",
    "report.html",
]


@pytest.fixture(scope="module")
def run(
    docker_sandbox: DockerSandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EvalRun]:
    pool = load_pool(RELEASE)
    cache = VerdictCache(tmp_path_factory.mktemp("report-cache") / "verdicts.sqlite")
    systems: list[RetrievalSystem] = [BM25System(), ReplaySystem.load(RESULTS, pool)]
    settings = EvalSettings(visible_tests=(None, 1))
    yield run_eval(pool, systems, Gate(docker_sandbox, cache=cache), settings)
    cache.close()


@pytest.fixture(scope="module")
def summary(run: EvalRun) -> Summary:
    return summarize(run)


@pytest.fixture(scope="module")
def out(run: EvalRun, summary: Summary, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("out")
    written = write_outputs(run, summary, folder)
    assert sorted(str(path.relative_to(folder)) for path in written) == sorted(OUTPUTS)
    return folder


def test_every_output_file_is_written_with_its_name(out: Path) -> None:
    present = sorted(str(p.relative_to(out)) for p in out.rglob("*") if p.is_file())
    assert present == sorted(OUTPUTS)


def test_results_files_reload_and_their_metrics_are_the_recomputed_ones(out: Path) -> None:
    for name in OUTPUTS[:6]:
        results = load_results(out / name)
        assert results.model == Path(name).stem
        assert results.n_queries == 3 and results.n_corpus == 14
        assert results.metrics == recompute_metrics(results, rounded=True)
        for query in results.per_query:
            for item in query.top_results:
                assert item.model_extra is not None
                assert item.model_extra["verdict"]["status"] in {"verified", "failed", "error"}
                assert item.model_extra["retrieval_rank"] >= 1
                assert len(item.test_results) == 5  # the full suite, hidden tests too


def test_gated_files_carry_the_gate_and_its_verdicts(out: Path) -> None:
    gated = load_results(out / "results/fixture__toy-minilm+gate-visible1.json")
    assert gated.model_extra is not None
    assert gated.model_extra["gate"] == {"policy": "rerank", "fetch_k": 10, "visible_tests": "1"}
    for query in gated.per_query:
        assert query.model_extra is not None
        gate = query.model_extra["gate"]
        assert set(gate) == {"abstained", "latency_s", "sandbox_runs", "cache_hits", "dropped"}
        assert len(query.top_results) + len(gate["dropped"]) == 10
        assert all(item.model_extra and item.model_extra["verdict"]["status"] == "verified"
                   for item in query.top_results)  # fmt: skip
        assert all(row["verdict"]["status"] != "verified" for row in gate["dropped"])
    # the gate saw one test; a distractor that passes it is handed over and still counts as buggy
    fooled = [i for q in gated.per_query for i in q.top_results if not i.passes_all_tests]
    assert fooled


def test_the_replayed_ranking_reproduces_the_release_metrics(out: Path) -> None:
    replayed = load_results(out / "results/fixture__toy-minilm.json")
    assert replayed.metrics == load_results(RESULTS).metrics


def test_summary_statistics(summary: Summary, out: Path) -> None:
    assert Summary.model_validate_json((out / "summary.json").read_text()) == summary
    arms = {arm.name: arm for arm in summary.arms}
    replay, gated = arms["fixture__toy-minilm"], arms["fixture__toy-minilm+gate"]
    assert (replay.agent.n_buggy, gated.agent.n_buggy) == (2, 0)
    assert gated.vs_ungated is not None
    buggy = gated.vs_ungated.mcnemar_acted_on_buggy
    assert (buggy.ungated_only, buggy.gated_only, buggy.both, buggy.neither) == (2, 0, 0, 1)
    assert buggy.p_value == pytest.approx(0.5)
    exec1 = gated.vs_ungated.mcnemar_exec_at_1
    assert (exec1.ungated_only, exec1.gated_only, exec1.both) == (0, 2, 1)
    difference = gated.vs_ungated.difference["exec@1"]
    assert difference.estimate == pytest.approx(gated.metrics["exec@1"] - replay.metrics["exec@1"])
    for arm in summary.arms:
        for interval in arm.intervals.values():
            assert interval.low <= interval.estimate <= interval.high
    assert replay.canonical_below is None  # a replay has no scores for the whole pool
    assert arms["bm25"].canonical_below is not None
    assert replay.rank1_misses.n_misses == 2 and replay.rank1_misses.paired_share == 1.0
    assert gated.gate_cost is not None and len(gated.gate_cost.latencies_ms) == 3
    assert arms["fixture__toy-minilm+gate-visible1"].gate_cost is not None
    assert arms["fixture__toy-minilm+gate-visible1"].gate_cost.queries_with_hidden_tests == 3
    assert summary.headlines[2].text == (
        "acted on buggy code: ungated 66.7% -> gated 0.0% (fixture__toy-minilm, gate sees all"
        " tests)"
    )
    assert summary.bootstrap["resamples"] == 5000 and summary.bootstrap["seed"] == 20260510


def test_html_report_is_self_contained_with_three_plots(out: Path) -> None:
    page = (out / "report.html").read_text(encoding="utf-8")
    references = re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, re.IGNORECASE)
    assert references and all(ref.startswith("data:image/png;base64,") for ref in references)
    assert not re.search(r"url\(|@import|<script|<link", page, re.IGNORECASE)
    images = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)
    assert len(images) == 3
    assert all(base64.b64decode(image).startswith(b"\x89PNG") for image in images)
    assert "acted on buggy code: ungated 66.7% -&gt; gated 0.0%" in page


def test_markdown_report_has_the_headline_and_a_table_per_system(
    summary: Summary, out: Path
) -> None:
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text == render_markdown(summary)
    assert "**acted on buggy code: ungated 66.7% -> gated 0.0%" in text
    assert "## bm25" in text and "## fixture__toy-minilm" in text
    assert "| exec@1 | 0.3333 \\[" in text
    assert "| acted on buggy code | 0.6667 \\[" in text
    assert "McNemar exact, fixture__toy-minilm vs fixture__toy-minilm+gate" in text
    assert "data:image" not in text


def test_nothing_is_written_when_the_output_folder_cannot_be_made(
    run: EvalRun, summary: Summary, tmp_path: Path
) -> None:
    blocker = tmp_path / "taken"
    blocker.write_text("a file, not a folder", encoding="utf-8")
    with pytest.raises(OutputError, match="cannot write"):
        write_outputs(run, summary, blocker / "out")
    assert [p.name for p in tmp_path.iterdir()] == ["taken"]
    assert render_html(summary).startswith("<!DOCTYPE html>")
