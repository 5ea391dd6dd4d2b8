"""Pool validation: labels that execution contradicts are found, refused, or relabelled.

The verdicts come from the real Docker sandbox, on fixture pools written for this
(`fixtures/mislabelled/`: a canonical that fails its tests, a distractor that passes them all).
Relabelling itself is a pure function of the contradictions, so its corner cases are driven by
hand-made contradictions below.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.gate import Gate
from guardrail_eval.errors import LabelError
from guardrail_eval.pool import CORPUS_FILE, CorpusEntry, Pool, Query, load_pool
from guardrail_eval.validation import Contradiction, PoolValidation, validate_pool

FIXTURES = Path(__file__).parent / "fixtures"
MISLABELLED = FIXTURES / "mislabelled"
RELEASE = FIXTURES / "release"
runner = CliRunner()


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Verdict cache, dense index and pool cache all live in the test's own folder."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(cache))
    return cache


@pytest.mark.docker
def test_labels_execution_contradicts_are_found_with_file_and_line(gate: Gate) -> None:
    validation = validate_pool(load_pool(MISLABELLED), gate)
    assert (validation.canonicals, validation.distractors) == (3, 4)
    assert validation.faults == []
    found = [
        (c.corpus_id, c.role, c.line, c.query_id, c.query_line) for c in validation.contradictions
    ]
    assert found == [
        ("c_0003", "distractor", 3, "q_0001", 1),
        ("c_0004", "canonical", 4, "q_0002", 2),
    ]
    distractor, canonical = validation.contradictions
    assert distractor.file == str(MISLABELLED / CORPUS_FILE)
    assert distractor.describe() == (
        f"{MISLABELLED / CORPUS_FILE}:3: c_0003, paired distractor of q_0001 (queries.jsonl:1),"
        " passes all 4 of its query's tests"
    )
    assert (canonical.status, canonical.reason) == ("failed", "tests_failed")
    assert "2 of 3 failed, first FAIL on 'assert count_set_bits(1) == 1'" in canonical.detail


@pytest.mark.docker
def test_a_pool_that_agrees_with_execution_is_left_as_it_is(gate: Gate) -> None:
    pool = load_pool(RELEASE)
    validation = validate_pool(pool, gate)
    assert validation.contradictions == [] and validation.faults == []
    assert (validation.canonicals, validation.distractors) == (3, 11)
    # Through the gate's verdict cache: the eval's ground truth finds these verdicts there.
    assert gate.cache is not None and len(gate.cache) == 29  # and each assert alone: 15
    settled, summary = validation.settle()
    assert settled is pool
    assert summary.relabelled == [] and summary.checked == 29
    assert summary.describe().endswith("every label agrees with execution.")


@pytest.mark.docker
def test_the_eval_refuses_a_mislabelled_pool_with_exit_2_and_writes_nothing(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    arguments = ["eval", "--pool", str(MISLABELLED), "--system", "bm25", "--out", str(out)]
    result = runner.invoke(app, arguments)
    assert result.exit_code == 2, result.output
    error = " ".join(result.stderr.split())  # Rich wraps long lines
    assert "error: 2 label(s) of pool 'mislabelled' contradict execution" in error
    assert f"{MISLABELLED / CORPUS_FILE}:3: c_0003, paired distractor of q_0001" in error
    assert f"{MISLABELLED / CORPUS_FILE}:4: c_0004, canonical of q_0002" in error
    assert "--relabel" in error
    assert not out.exists()


@pytest.mark.docker
def test_relabel_drops_a_failing_canonicals_query_and_counts_a_passing_distractor_correct(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out"
    arguments = ["eval", "--pool", str(MISLABELLED), "--system", "bm25", "--out", str(out)]
    result = runner.invoke(app, [*arguments, "--relabel"])
    assert result.exit_code == 0, result.output
    assert "2 label(s) contradicted execution and were relabelled" in " ".join(
        result.stdout.split()
    )
    summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    validation = summary["validation"]
    changes = [
        (c["contradiction"]["corpus_id"], c["contradiction"]["line"], c["action"])
        for c in validation["relabelled"]
    ]
    assert changes == [("c_0003", 3, "counted as correct"), ("c_0004", 4, "query dropped")]
    assert validation["dropped_queries"] == ["q_0002"]
    assert summary["pool"]["n_queries"] == 2
    results = json.loads((out / "results" / "bm25.json").read_text(encoding="utf-8"))
    assert [query["query_id"] for query in results["per_query"]] == ["q_0001", "q_0003"]
    report = " ".join((out / "report.md").read_text(encoding="utf-8").split())
    assert "were relabelled (--relabel)" in report
    assert "corpus.jsonl:3: c_0003, paired distractor of q_0001" in report


def _pool() -> Pool:
    """Two queries sharing nothing; ``q2`` has two canonicals."""

    def entry(cid: str, label: str) -> CorpusEntry:
        bug = "wrong_constant" if label == "incorrect" else None
        return CorpusEntry.model_validate(
            {"corpus_id": cid, "code": "def f():\n    return 1\n", "label": label, "bug_type": bug}
        )

    def query(qid: str, correct: list[str], paired: list[str]) -> Query:
        return Query(
            query_id=qid,
            query="f",
            test_suite=["assert f() == 1"],
            correct_corpus_ids=correct,
            paired_distractor_corpus_ids=paired,
        )

    corpus = {
        cid: entry(cid, "correct" if cid.startswith("k") else "incorrect")
        for cid in ["k1", "d1", "k2", "k3", "d2", "d3"]
    }
    return Pool(
        "hand", corpus, [query("q1", ["k1"], ["d1"]), query("q2", ["k2", "k3"], ["d2", "d3"])]
    )


def _contradiction(pool: Pool, qid: str, cid: str) -> Contradiction:
    role: Literal["canonical", "distractor"] = (
        "canonical" if pool.corpus[cid].label == "correct" else "distractor"
    )
    return Contradiction(
        query_id=qid,
        corpus_id=cid,
        role=role,
        file="<pool hand>/corpus.jsonl",
        line=None,
        query_file="<pool hand>/queries.jsonl",
        query_line=None,
        status="failed" if role == "canonical" else "verified",
        reason="tests_failed" if role == "canonical" else "passed",
        detail="by hand",
    )


def test_a_failing_canonical_beside_a_passing_one_only_leaves_the_correct_ids() -> None:
    pool = _pool()
    contradictions = [_contradiction(pool, "q2", "k3"), _contradiction(pool, "q2", "d3")]
    settled, summary = PoolValidation(pool, contradictions).settle(relabel=True)
    q2 = settled.queries[1]
    assert q2.correct_corpus_ids == ["k2", "d3"]
    assert q2.paired_distractor_corpus_ids == ["d2"]
    assert settled.corpus["d3"].label == "correct" and settled.corpus["d3"].bug_type is None
    assert pool.corpus["d3"].label == "incorrect"  # the loaded pool is not changed
    assert [c.action for c in summary.relabelled] == [
        "removed from the correct ids",
        "counted as correct",
    ]
    assert summary.dropped_queries == []


def test_refused_without_relabel_and_nothing_left_is_refused_with_it() -> None:
    pool = _pool()
    validation = PoolValidation(pool, [_contradiction(pool, "q1", "k1")])
    with pytest.raises(LabelError, match=r"1 label\(s\) of pool 'hand' contradict execution"):
        validation.settle()
    settled, _ = validation.settle(relabel=True)
    assert [query.query_id for query in settled.queries] == ["q2"]
    everything = [
        _contradiction(pool, "q1", "k1"),
        _contradiction(pool, "q2", "k2"),
        _contradiction(pool, "q2", "k3"),
    ]
    with pytest.raises(LabelError, match="no query of pool 'hand' is left"):
        PoolValidation(pool, everything).settle(relabel=True)


def test_a_distractor_passing_one_query_but_paired_with_another_gets_no_label() -> None:
    pool = _pool()
    shared = pool.queries[1].model_copy(update={"paired_distractor_corpus_ids": ["d2", "d1"]})
    pool = pool.relabelled(dict(pool.corpus), [pool.queries[0], shared])
    validation = PoolValidation(pool, [_contradiction(pool, "q1", "d1")])
    with pytest.raises(LabelError, match=r"d1 passes every test .* distractor of q2 too"):
        validation.settle(relabel=True)
