"""Results files: load the release's shape, replay in stored rank order, recompute the metrics."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from release_check_values import GEMINI_EMBEDDING_2

from guardrail.errors import InputError
from guardrail_eval.errors import OutputError, ResultsFormatError
from guardrail_eval.metrics import compute_metrics, rank1_miss_composition, release_rounded
from guardrail_eval.pool import load_pool
from guardrail_eval.results import (
    QueryResult,
    ResultsFile,
    TopResult,
    load_results,
    recompute_metrics,
    write_results,
)

FIXTURES = Path(__file__).parent / "fixtures"
RESULTS = FIXTURES / "release" / "results" / "fixture__toy-minilm.json"

# The fixture's canonicals sit at ranks 2 (q_0001), 1 (q_0002) and 4 (q_0004), and each is the
# only item of its top 10 that passes all tests. By hand:
#   exec@1 = 1/3; exec@3 = 2/3; exec@5 = exec@10 = 1
#   precision@k = (canonicals in the top k) / (3k): 1/3, 2/9, 3/15, 3/30
#   ndcg@3 = (1/log2(3) + 1) / 3 = 0.5436; ndcg@5 = ndcg@10 = (1/log2(3) + 1 + 1/log2(5)) / 3
HAND_COMPUTED = {
    "exec@1": 0.3333, "precision@1": 0.3333, "ndcg@1": 0.3333, "exec_ndcg_gap@1": 0.0,
    "exec@3": 0.6667, "precision@3": 0.2222, "ndcg@3": 0.5436, "exec_ndcg_gap@3": 0.1231,
    "exec@5": 1.0, "precision@5": 0.2, "ndcg@5": 0.6872, "exec_ndcg_gap@5": 0.3128,
    "exec@10": 1.0, "precision@10": 0.1, "ndcg@10": 0.6872, "exec_ndcg_gap@10": 0.3128,
}  # fmt: skip


def test_the_fixture_loads_and_keeps_unknown_fields() -> None:
    results = load_results(RESULTS)
    assert (results.model, results.n_queries, results.n_corpus) == ("fixture/toy-minilm", 3, 14)
    assert results.ks == [1, 3, 5, 10]
    assert results.model_extra == {"generated_by": "fixture generator (hand-checked)"}
    gated_item = results.per_query[2].top_results[0]
    assert gated_item.model_extra == {
        "verdict": {"status": "failed", "failed_tests": ["assert count_set_bits(0) == 0"]}
    }
    assert results.per_query[0].top_results[0].bug_type == ""  # a canonical: "" not absent


def test_stored_metrics_equal_the_recomputed_ones_and_the_hand_computed_ones() -> None:
    results = load_results(RESULTS)
    assert results.metrics == HAND_COMPUTED
    assert release_rounded(recompute_metrics(results)) == results.metrics  # the release's rounding
    assert recompute_metrics(results)["ndcg@3"] == pytest.approx(0.543643, abs=1e-6)


def test_replay_uses_the_stored_rank_not_the_list_order_or_the_similarity() -> None:
    results = load_results(RESULTS)
    first = results.per_query[0]
    # in the file, rank 2 (the canonical) is listed before rank 1 (a distractor), with the same
    # rounded similarity: a re-sort by similarity would put the canonical first
    assert [item.rank for item in first.top_results[:2]] == [2, 1]
    assert first.top_results[0].similarity == first.top_results[1].similarity
    assert [item.corpus_id for item in first.ranked()[:2]] == ["c_0002", "c_0001"]
    resorted = sorted(first.top_results, key=lambda item: -item.similarity)
    assert resorted[0].corpus_id == "c_0001"  # the trap the replay must not fall into
    assert recompute_metrics(results)["exec@1"] == pytest.approx(1 / 3)


def test_paired_ids_from_the_pool_give_the_miss_composition() -> None:
    results = load_results(RESULTS)
    pool = load_pool(FIXTURES / "release")
    paired = {query.query_id: query.paired_distractor_corpus_ids for query in pool.queries}
    composition = rank1_miss_composition(results.ranked_queries(paired))
    # rank-1 misses: q_0001's c_0002 (wrong_comparison), q_0004's c_0014 (off_by_one_boundary)
    assert (composition.n_misses, composition.n_paired) == (2, 2)
    assert composition.by_bug_type == {"off_by_one_boundary": 1, "wrong_comparison": 1}
    without_pool = rank1_miss_composition(results.ranked_queries())
    assert without_pool.n_paired == 0


def test_write_results_round_trips_byte_for_byte(tmp_path: Path) -> None:
    target = tmp_path / "results" / "fixture__toy-minilm.json"
    write_results(load_results(RESULTS), target)
    assert target.read_bytes() == RESULTS.read_bytes()
    assert [path.name for path in target.parent.iterdir()] == [target.name]


def test_write_results_keeps_any_string_exact_and_the_file_terminal_safe(tmp_path: Path) -> None:
    results = load_results(RESULTS)
    hostile = "\udc80 lone surrogate, \x9b31m C1, \u202e bidi, \x1b]0;t\x07 OSC, ünï ✓"
    item = results.per_query[0].top_results[0]
    results.per_query[0].top_results[0] = item.model_copy(update={"bug_type": hostile})
    target = tmp_path / "hostile.json"
    write_results(results, target)  # a lone surrogate made this raise UnicodeEncodeError
    text = target.read_text(encoding="utf-8")
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\ud800-\udfff]", text)
    assert "ünï ✓" in text
    assert load_results(target).per_query[0].top_results[0].bug_type == hostile


def test_write_results_failure_is_an_output_error(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("a file where a folder should be")
    with pytest.raises(OutputError, match="cannot write"):
        write_results(load_results(RESULTS), tmp_path / "taken" / "model.json")


def gemini_like_results() -> ResultsFile:
    """939 queries; the canonical is the only passing item, at the histogram's ranks."""
    histogram = {1: 311, 2: 265, 3: 197, 4: 120, 5: 43, 7: 1, 8: 1, 9: 1}
    per_query = []
    for rank, count in histogram.items():
        for n in range(count):
            query_id = f"q_{rank}_{n}"
            items = [
                TopResult(
                    rank=position,
                    corpus_id=f"{query_id}_{'canon' if position == rank else position}",
                    label="correct" if position == rank else "incorrect",
                    bug_type="" if position == rank else "wrong_operator",
                    similarity=round(0.9 - position / 100, 6),
                    passes_all_tests=position == rank,
                )
                for position in range(10, 0, -1)  # listed in reverse: only `rank` orders them
            ]
            per_query.append(
                QueryResult(
                    query_id=query_id,
                    query="...",
                    correct_corpus_ids=[f"{query_id}_canon"],
                    top_results=items,
                )
            )
    return ResultsFile(
        model="google/gemini-embedding-2",
        n_queries=939,
        n_corpus=4694,
        ks=[1, 3, 5, 10],
        metrics=GEMINI_EMBEDDING_2,
        per_query=per_query,
    )


def test_a_939_query_results_file_replays_to_the_published_metrics(tmp_path: Path) -> None:
    path = tmp_path / "gemini.json"
    write_results(gemini_like_results(), path)
    results = load_results(path)
    assert release_rounded(recompute_metrics(results)) == results.metrics == GEMINI_EMBEDDING_2
    assert compute_metrics(results.ranked_queries())["exec@1"] == 311 / 939


# --- malformed results: each error names the file and the line -------------------------------


def fixture_text() -> str:
    return RESULTS.read_text(encoding="utf-8")


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    position = -1
    for _ in range(occurrence):
        position = text.index(needle, position + 1)
    return text.count("\n", 0, position) + 1


def test_bad_json_names_the_line(tmp_path: Path) -> None:
    text = fixture_text().replace('"passes_all_tests": false,', '"passes_all_tests": false', 1)
    path = tmp_path / "bad.json"
    path.write_text(text)
    with pytest.raises(ResultsFormatError) as caught:
        load_results(path)
    expected = line_of(fixture_text(), '"passes_all_tests": false,') + 1  # the next key's line
    assert caught.value.line == expected
    assert str(caught.value).startswith(f"{path}:{expected}: not valid JSON")
    assert isinstance(caught.value, InputError)


def test_a_wrong_type_names_the_line_of_the_value(tmp_path: Path) -> None:
    text = fixture_text()
    needle = '"passes_all_tests": true'
    # second query's rank-1 canonical
    target_line = line_of(text, needle, 2)
    lines = text.splitlines()
    lines[target_line - 1] = lines[target_line - 1].replace("true", '"yes"')
    path = tmp_path / "typed.json"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(ResultsFormatError) as caught:
        load_results(path)
    assert caught.value.line == target_line
    assert caught.value.field == "per_query[1].top_results[0].passes_all_tests"
    assert "valid boolean" in str(caught.value)


def test_a_missing_field_names_the_line_of_its_object(tmp_path: Path) -> None:
    data = json.loads(fixture_text())
    del data["per_query"][2]["top_results"][3]["rank"]
    text = json.dumps(data, indent=2)
    path = tmp_path / "missing.json"
    path.write_text(text)
    with pytest.raises(ResultsFormatError) as caught:
        load_results(path)
    # c_0010 is listed in q_0001 and q_0002 before q_0004's rank 4; its "{" is the line above
    object_line = line_of(text, '"corpus_id": "c_0010"', 3) - 1
    assert caught.value.line == object_line
    assert caught.value.field == "per_query[2].top_results[3].rank"
    assert "required field is missing" in str(caught.value)


@pytest.mark.parametrize(
    ("edit", "field", "message"),
    [
        (lambda d: d["per_query"][1]["top_results"][4].update(rank=1), "per_query[1]",
         "rank 1 appears twice"),
        (lambda d: d.update(n_queries=939), "", "n_queries is 939 but per_query holds 3"),
        (lambda d: d.update(ks=[1, 1]), "", "ks must be distinct"),
        (lambda d: d["per_query"][0]["top_results"][0].update(rank=0),
         "per_query[0].top_results[0].rank", "greater than or equal to 1"),
        (lambda d: d["metrics"].update({"exec@1": "high"}), "metrics.exec@1", "valid number"),
        (lambda d: d["per_query"][0].update(correct_corpus_ids=[]),
         "per_query[0].correct_corpus_ids", "at least 1 item"),
    ],
)  # fmt: skip
def test_inconsistent_results_are_refused(
    tmp_path: Path, edit: object, field: str, message: str
) -> None:
    data = json.loads(fixture_text())
    assert callable(edit)
    edit(data)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps(data, indent=2))
    with pytest.raises(ResultsFormatError) as caught:
        load_results(path)
    assert caught.value.field == field
    assert message in str(caught.value)
    assert caught.value.line is not None


def test_a_results_file_must_be_an_object(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[]\n")
    with pytest.raises(ResultsFormatError, match=r"list\.json:1: expected a JSON object"):
        load_results(path)


def test_a_missing_results_file(tmp_path: Path) -> None:
    with pytest.raises(ResultsFormatError, match="no such results file"):
        load_results(tmp_path / "absent.json")
