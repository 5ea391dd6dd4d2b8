"""Summary statistics and the output folder: results files, summary.json, report.md/.html."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrail.cache import VerdictCache
from guardrail.gate import Gate
from guardrail.sandbox.docker import DockerSandbox
from guardrail_eval.errors import OutputError
from guardrail_eval.metrics import compute_metrics, release_rounded, round_metrics
from guardrail_eval.pool import load_pool
from guardrail_eval.report import render_html, render_markdown, write_outputs
from guardrail_eval.results import QueryResult, load_results, recompute_metrics
from guardrail_eval.runner import EvalRun, EvalSettings, run_eval
from guardrail_eval.shortcuts import Candidate, picker_values
from guardrail_eval.stats import sign_test
from guardrail_eval.structural import near_clone_distances, structural_order
from guardrail_eval.summary import Summary, summarize
from guardrail_eval.systems import BM25System, ReplaySystem, RetrievalSystem
from guardrail_eval.ties import tied
from guardrail_eval.visible import visible_indices, visible_spec

pytestmark = pytest.mark.docker

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release"
RESULTS = RELEASE / "results" / "fixture__toy-minilm.json"
ARMS = ["", "+structural", "+upper-bound", "+visible1", "+visible1+consensus", "+visible1+agree"]
ARMS += [f"+visible1+{who}-ask{q}" for who in ("noisy", "oracle") for q in (1, 2)]
SWEEP = [f"+visible{n}" for n in range(2, 6)]  # the fixture's suites have 5 tests
RESULT_FILES = [
    f"results/{system}{arm}.json"
    for system in ("bm25", "fixture__toy-minilm")
    for arm in (*ARMS, *SWEEP)
]
OUTPUTS = [*RESULT_FILES, "summary.json", "report.md", "report.html"]


@pytest.fixture(scope="module")
def run(
    docker_sandbox: DockerSandbox, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[EvalRun]:
    pool = load_pool(RELEASE)
    cache = VerdictCache(tmp_path_factory.mktemp("report-cache") / "verdicts.sqlite")
    systems: list[RetrievalSystem] = [BM25System(), ReplaySystem.load(RESULTS, pool)]
    settings = EvalSettings(visible_tests=(1,), draws=3, questions=2, sweep=True)
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
    for name in RESULT_FILES:
        results = load_results(out / name)
        assert results.model == Path(name).stem
        draws = 3 if "+visible" in name else 1
        assert results.n_queries == 3 * draws and results.n_corpus == 14
        assert results.metrics == recompute_metrics(results, rounded=True)
        for query in results.per_query:
            for item in query.top_results:
                assert item.model_extra is not None
                assert item.model_extra["verdict"]["status"] in {"verified", "failed", "error"}
                assert item.model_extra["retrieval_rank"] >= 1
                assert len(item.test_results) == 5  # the full suite, hidden tests too


def test_gated_files_carry_the_gate_and_its_verdicts(out: Path) -> None:
    gated = load_results(out / "results/fixture__toy-minilm+visible1.json")
    assert gated.model_extra is not None
    assert gated.model_extra["gate"] == {
        "policy": "rerank", "fetch_k": 10, "visible_tests": 1, "draw_seed": 0
    }  # fmt: skip
    assert gated.model_extra["draws"] == 3 and gated.model_extra["n_distinct_queries"] == 3
    for index, query in enumerate(gated.per_query):
        assert query.model_extra is not None
        assert query.model_extra["draw"] == index // 3
        assert len(query.model_extra["visible_tests"]) == 1
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
    # The same ranking; the release rounds its gaps from rounded parts, we from unrounded values.
    assert release_rounded(recompute_metrics(replayed)) == load_results(RESULTS).metrics
    assert replayed.metrics["exec_ndcg_gap@3"] == 0.123  # 0.1231 in the release's own rounding


def test_summary_statistics(summary: Summary, out: Path) -> None:
    assert Summary.model_validate_json((out / "summary.json").read_text()) == summary
    arms = {arm.name: arm for arm in summary.arms}
    replay, gated = arms["fixture__toy-minilm"], arms["fixture__toy-minilm+structural"]
    assert (replay.agent.n_buggy, gated.agent.n_buggy) == (2, 0)
    assert gated.vs_ungated is not None
    buggy = gated.vs_ungated.mcnemar_acted_on_buggy
    assert buggy is not None
    assert (buggy.ungated_only, buggy.gated_only, buggy.both, buggy.neither) == (2, 0, 0, 1)
    assert buggy.p_value == pytest.approx(0.5)
    exec1 = gated.vs_ungated.mcnemar_exec_at_1
    assert buggy is not None and exec1 is not None
    assert (exec1.ungated_only, exec1.gated_only, exec1.both) == (0, 2, 1)
    upper = arms["fixture__toy-minilm+upper-bound"]
    assert upper.vs_ungated is not None and upper.vs_ungated.mcnemar_acted_on_buggy is None
    assert upper.metrics["exec@1"] == replay.metrics["exec@10"]  # a ceiling by construction
    difference = gated.vs_ungated.difference["exec@1"]
    assert difference.estimate == pytest.approx(gated.metrics["exec@1"] - replay.metrics["exec@1"])
    for arm in summary.arms:
        for interval in arm.intervals.values():
            assert interval.low <= interval.estimate <= interval.high
    assert replay.canonical_below is None  # a replay has no scores for the whole pool
    assert arms["bm25"].canonical_below is not None
    assert replay.rank1_misses.n_misses == 2 and replay.rank1_misses.paired_share == 1.0
    assert gated.gate_cost is None  # the structural picker runs nothing
    assert upper.gate_cost is not None and len(upper.gate_cost.latencies_ms) == 3
    visible = arms["fixture__toy-minilm+visible1"]
    assert visible.gate_cost is not None and len(visible.gate_cost.latencies_ms) == 9
    assert visible.gate_cost.queries_with_hidden_tests == 9
    assert visible.draw_means is not None and len(visible.draw_means["exec@1"]) == 3
    text = _flat(summary.headlines[1].text)
    assert text.startswith(
        "fixture__toy-minilm: acted on correct / acted on buggy / got nothing: ungated 33.3% /"
        " 66.7% / 0.0% -> visible1 "
    )
    assert "upper" not in text and "oracle" not in text  # upper bounds are never the result
    bounds = summary.headlines[1].upper_bounds
    assert bounds is not None and "all tests 100.0% / 0.0% / 0.0%" in _flat(bounds)
    assert "visible1+oracle-ask1 " in _flat(bounds)
    for headline in summary.headlines:
        for line in [*headline.text.splitlines(), *(headline.upper_bounds or "").splitlines()]:
            assert len(line) <= 80 and not line.endswith("->"), line
    assert summary.bootstrap["resamples"] == 5000 and summary.bootstrap["seed"] == 20260510


def _flat(text: str) -> str:
    return " ".join(line.strip() for line in text.splitlines())


def test_html_report_is_self_contained_with_five_plots(out: Path) -> None:
    page = (out / "report.html").read_text(encoding="utf-8")
    references = re.findall(r"""(?:src|href)\s*=\s*["']?([^"'\s>]+)""", page, re.IGNORECASE)
    assert references and all(ref.startswith("data:image/png;base64,") for ref in references)
    assert not re.search(r"url\(|@import|<script|<link", page, re.IGNORECASE)
    images = re.findall(r"data:image/png;base64,([A-Za-z0-9+/=]+)", page)
    assert len(images) == 5  # agent outcomes, exec@k, misses, latency, sweep
    assert all(base64.b64decode(image).startswith(b"\x89PNG") for image in images)
    assert "ungated 33.3% / 66.7% / 0.0% -&gt; visible1" in page


def test_markdown_report_has_the_headline_and_a_table_per_system(
    summary: Summary, out: Path
) -> None:
    text = (out / "report.md").read_text(encoding="utf-8")
    assert text == render_markdown(summary)
    assert "**fixture__toy-minilm: acted on correct / acted on buggy / got nothing:" in text
    assert "## bm25" in text and "## fixture__toy-minilm" in text
    assert "| exec@1 | 0.3333 \\[" in text
    assert "| acted on buggy code | 0.6667 \\[" in text
    assert "it is not verification" in text  # the structural arm's caption
    assert "a ceiling, not a result" in text  # the upper bound's
    assert "## Sweep: 1..N visible tests" in text
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


def test_every_arm_recomputes_from_its_written_rankings(out: Path) -> None:
    """An independent recomputation from results/*.json and the pool, without the run."""
    pool = load_pool(RELEASE)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for arm in [*summary["arms"], *summary["sweep"]]:
        results = load_results(out / arm["results_file"])
        draws = arm["draws"]
        entries = results.per_query
        assert len(entries) == draws * arm["n_queries"]
        top1 = [q.ranked()[0].passes_all_tests if q.top_results else None for q in entries]
        assert arm["agent"]["n_correct"] == sum(1 for t in top1 if t is True)
        assert arm["agent"]["n_buggy"] == sum(1 for t in top1 if t is False)
        assert arm["agent"]["n_nothing"] == sum(1 for t in top1 if t is None)
        recomputed = round_metrics(compute_metrics(results.ranked_queries()))
        assert recomputed == arm["metrics"] == results.metrics, arm["name"]
        if draws > 1:
            per_draw = [
                entries[d * arm["n_queries"] : (d + 1) * arm["n_queries"]] for d in range(draws)
            ]
            exec1 = [
                round(sum(1 for q in chunk if q.top_results and q.ranked()[0].passes_all_tests)
                      / len(chunk), 4)
                for chunk in per_draw
            ]  # fmt: skip
            assert exec1 == arm["draw_means"]["exec@1"]
        # one number, one value: a metric and its interval's estimate are the same figure
        for key, value in arm["metrics"].items():
            assert arm["intervals"][key]["estimate"] == value, (arm["name"], key)
    # The structural ranking follows from the ungated one and the pool's code alone.
    for system in ("bm25", "fixture__toy-minilm"):
        ungated = load_results(out / f"results/{system}.json")
        structural = load_results(out / f"results/{system}+structural.json")
        for plain, picked in zip(ungated.per_query, structural.per_query, strict=True):
            ids = [item.corpus_id for item in plain.ranked()]
            order = structural_order([pool.corpus[cid].code for cid in ids])
            assert [item.corpus_id for item in picked.ranked()] == [ids[i] for i in order]
        upper = load_results(out / f"results/{system}+upper-bound.json")
        for plain, gated in zip(ungated.per_query, upper.per_query, strict=True):
            passing = [item.corpus_id for item in plain.ranked() if item.passes_all_tests]
            assert [item.corpus_id for item in gated.ranked()] == passing


def test_visible_draws_are_seeded_random_subsets_and_every_gate_run_is_real(run: EvalRun) -> None:
    arms = {arm.name: arm for arm in run.arms}
    visible = arms["bm25+visible1"]
    seen = {(o.query.query_id, o.visible) for o in visible.outcomes}
    assert len({v for _, v in seen}) > 1  # not always the first test
    for outcome in visible.outcomes:
        assert outcome.visible is not None
        assert outcome.visible == visible_indices(outcome.query, 1, outcome.draw, seed=0)
        shown = list(visible_spec(run.pool, outcome.query, outcome.visible).tests)
        assert len(shown) == 1
        judged = [item.gate_verdict for item in (*outcome.items, *outcome.dropped)]
        assert all(verdict is not None for verdict in judged)
        ran = [verdict for verdict in judged if verdict is not None and verdict.tests]
        assert ran  # (a snippet defining nothing the test calls is refused before it runs)
        for verdict in ran:
            # the gate's own verdict ran exactly the drawn test (never derived from the truth)
            assert [test.test for test in verdict.tests] == shown
    three = arms["bm25+visible3"]
    for outcome in three.outcomes:
        assert outcome.visible is not None and len(outcome.visible) == 3
        one = visible_indices(outcome.query, 1, outcome.draw, seed=0)
        assert set(one) <= set(outcome.visible)  # nested within a draw


def test_the_html_report_never_runs_off_the_page(out: Path) -> None:
    page = (out / "report.html").read_text(encoding="utf-8")
    style = re.search(r"<style>(.*?)</style>", page, re.DOTALL)
    assert style is not None
    css = style.group(1)
    assert ".wide{max-width:100%;overflow-x:auto}" in css
    assert re.search(r"body\{[^}]*overflow-wrap:anywhere", css)
    assert re.search(r"th,td\{[^}]*overflow-wrap:anywhere", css)
    assert "img{max-width:100%" in css
    tables = re.findall(r"<table>", page)
    wrapped = re.findall(r'<div class="wide"><table>', page)
    assert tables and len(wrapped) == len(tables)
    assert "<pre" not in page and "white-space:nowrap" not in page


def test_ask_arms_follow_the_rounds_and_silent_buggy_recomputes(run: EvalRun, out: Path) -> None:
    arms = {arm.name: arm for arm in run.arms}
    visible, one, two = (arms[f"bm25+visible1{a}"] for a in ("", "+oracle-ask1", "+oracle-ask2"))
    for zero, first, second in zip(visible.outcomes, one.outcomes, two.outcomes, strict=True):
        assert zero.visible == first.visible == second.visible  # the same draw of tests
        assert zero.questions == 0 and second.questions is not None
        assert first.questions is not None and first.questions <= 1
        assert first.questions <= second.questions <= 2
        if zero.silent:  # no question: nothing to ask, every later round is round 0
            assert first.items == zero.items and second.items == zero.items
        assert first.cost is not None and zero.cost is not None
        assert first.cost.latency_s >= zero.cost.latency_s  # cumulative
    assert any(outcome.questions for outcome in two.outcomes)  # the oracle answered some
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    for arm in summary["arms"]:
        if arm["kind"] not in {"visible", "consensus", "agree", "noisy-ask", "oracle-ask"}:
            assert arm["asking"] is None
            continue
        results = load_results(out / arm["results_file"])
        silent_buggy = [
            1.0 if q.model_extra and q.model_extra["silent"] and q.top_results
            and not q.ranked()[0].passes_all_tests else 0.0
            for q in results.per_query
        ]  # fmt: skip
        share = round(sum(silent_buggy) / len(silent_buggy), 4)
        assert arm["asking"]["silent_buggy"]["estimate"] == share, arm["name"]
        extras = [q.model_extra or {} for q in results.per_query]
        asked = [extra["questions"] for extra in extras]
        assert arm["asking"]["questions_mean"] == round(sum(asked) / len(asked), 4)
        raised = [e for e in extras if e["hidden_probe"] or e["questions"] or not e["silent"]]
        assert arm["asking"]["asked"] == round(len(raised) / len(extras), 4)
        hidden = sum(1 for e in raised if e["hidden_probe"])
        hidden_share = round(hidden / len(raised), 4) if raised else None
        assert arm["asking"]["hidden_probe"] == hidden_share, arm["name"]
        wrong = [e["wrong_answers"] for e in extras if "wrong_answers" in e]
        assert (arm["kind"] == "noisy-ask") is bool(wrong)
        if wrong:
            assert arm["asking"]["wrong_answers_mean"] == round(sum(wrong) / len(wrong), 4)


def test_tie_counts_are_those_of_the_retrievers_scores(run: EvalRun, summary: Summary) -> None:
    arms = {arm.name: arm for arm in summary.arms}
    ungated = next(arm for arm in run.arms if arm.name == "bm25")
    expected_rank1 = sum(
        tied(o.items[0].score, o.items[1].score) for o in ungated.outcomes if len(o.items) > 1
    )
    expected_canonical = 0
    for outcome in ungated.outcomes:
        scores = outcome.snippet_scores or {}
        query = outcome.query
        expected_canonical += any(
            tied(scores[c], scores[d])
            for c in query.correct_corpus_ids
            for d in query.paired_distractor_corpus_ids
        )
    ties = arms["bm25"].ties
    assert ties is not None and ties.n_scored == 3
    assert (ties.rank1_tied, ties.canonical_tied) == (expected_rank1, expected_canonical)
    assert arms["fixture__toy-minilm"].ties is not None  # a replay's stored scores count too
    assert arms["bm25+visible1"].ties is None  # counted once per system, on its own ranking


def test_the_latency_plot_labels_cache_hits(summary: Summary) -> None:
    from guardrail_eval.plots import _cached

    for arm in summary.arms:
        cost = arm.gate_cost
        if cost is None:
            assert _cached(arm) == ""
        elif cost.cache_hits == cost.verdicts:
            assert _cached(arm) == "\n(all cache hits)"
        else:
            assert _cached(arm) == f"\n({cost.cache_hits} of {cost.verdicts} cache hits)"


def test_the_best_shortcut_stands_beside_the_gate_and_says_when_it_wins(
    run: EvalRun, summary: Summary
) -> None:
    arms = {arm.name: arm for arm in summary.arms}
    for headline in summary.headlines:
        shortcuts = headline.shortcuts
        assert shortcuts is not None and shortcuts.n_queries == len(run.pool.queries)
        assert shortcuts.candidates == f"the top 10 of {headline.system}"
        # The structural-centre picker is the structural arm, computed apart.
        structural = arms[f"{headline.system}+structural"].agent.correct
        assert shortcuts.exec_at_1["structural-centre"] == pytest.approx(structural, abs=1e-4)
        best = max(
            (
                arm
                for arm in summary.arms
                if arm.system == headline.system
                and arm.kind in {"visible", "consensus", "agree", "noisy-ask"}
            ),
            key=lambda arm: arm.agent.correct,
        )
        assert best.role == "result"
        assert headline.shortcut_wins is (shortcuts.best_exec_at_1 >= best.agent.correct)
        text = _flat(headline.text)
        said = f"best shortcut {shortcuts.best} {shortcuts.best_exec_at_1:.1%} acted on correct"
        assert said in text
        assert ("the shortcut WINS over the gate" in text) is headline.shortcut_wins
        versus = headline.versus_shortcut
        assert versus is not None and versus.gate_arm == best.name
        assert f"(sign test p = {versus.p_value:.3g})" in text


def test_the_honest_arms_and_the_shortcut_test_recompute_from_the_files(out: Path) -> None:
    pool = load_pool(RELEASE)
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    arms = {arm["name"]: arm for arm in summary["arms"]}
    by_id = {query.query_id: query for query in pool.queries}

    def entries(name: str) -> list[QueryResult]:
        return load_results(out / arms[name]["results_file"]).per_query

    for system in ("bm25", "fixture__toy-minilm"):
        # consensus reorders what the gate kept, and only when the gate saw a disagreement
        plain, voted = entries(f"{system}+visible1"), entries(f"{system}+visible1+consensus")
        for a, b in zip(plain, voted, strict=True):
            ids_a = [item.corpus_id for item in a.ranked()]
            ids_b = [item.corpus_id for item in b.ranked()]
            assert sorted(ids_a) == sorted(ids_b)
            if (b.model_extra or {})["silent"]:
                assert ids_a == ids_b
        # agree hands over what the gate kept when it raised no question, else nothing
        withheld = entries(f"{system}+visible1+agree")
        for a, b in zip(plain, withheld, strict=True):
            ids_b = [item.corpus_id for item in b.ranked()]
            if (b.model_extra or {})["silent"]:
                assert ids_b == [item.corpus_id for item in a.ranked()]
            else:
                assert ids_b == []
        # a noisy answerer that was never wrong took the oracle's path
        for q in (1, 2):
            noisy, oracle = (entries(f"{system}+visible1+{w}-ask{q}") for w in ("noisy", "oracle"))
            for a, b in zip(noisy, oracle, strict=True):
                if (a.model_extra or {})["wrong_answers"] == 0:
                    assert [i.corpus_id for i in a.ranked()] == [i.corpus_id for i in b.ranked()]
        # misses are per draw, never summed over draws
        for name in (f"{system}+visible1", f"{system}+visible1+oracle-ask2"):
            arm, got = arms[name], entries(name)
            misses = sum(1 for e in got if e.top_results and not e.ranked()[0].passes_all_tests)
            assert arm["rank1_misses"]["n_misses"] == round(misses / arm["draws"], 4)
        # the gate's best honest arm against the best shortcut, query by query
        (headline,) = [h for h in summary["headlines"] if h["system"] == system]
        versus = headline["versus_shortcut"]
        assert arms[versus["gate_arm"]]["role"] == "result"
        candidates = [
            (
                by_id[entry.query_id],
                [
                    Candidate(i.corpus_id, pool.corpus[i.corpus_id].code, i.passes_all_tests)
                    for i in entry.ranked()[:10]
                ],
            )
            for entry in load_results(out / f"results/{system}.json").per_query
        ]
        shortcut = picker_values(candidates, versus["shortcut"])
        gate_arm, got = arms[versus["gate_arm"]], entries(versus["gate_arm"])
        n = gate_arm["n_queries"]
        hits = [1.0 if e.top_results and e.ranked()[0].passes_all_tests else 0.0 for e in got]
        gate = [sum(hits[d * n + i] for d in range(gate_arm["draws"])) / gate_arm["draws"]
                for i in range(n)]  # fmt: skip
        test = sign_test(gate, shortcut)
        assert (versus["gate_higher"], versus["shortcut_higher"]) == (test.a_higher, test.b_higher)
        assert versus["p_value"] == test.p_value
    # the structural caption says what this pool is, not what mutation pools usually are
    near = summary["pool"]["near_clones"]
    distances = near_clone_distances(
        (pool.canonical(query).code, pool.corpus[cid].code)
        for query in pool.queries
        for cid in query.paired_distractor_corpus_ids
    )
    assert near["n_distractors"] == len(distances)
    assert near["n_near"] == sum(1 for d, limit in distances if d <= limit)
    text = (out / "report.md").read_text(encoding="utf-8")
    assert f"In this pool {near['n_near']} of {near['n_distractors']} paired distractors" in text
    assert "an UPPER BOUND on a careful user, not a result" in text
    assert "MBR-exec" in text and "sign test p" in text
