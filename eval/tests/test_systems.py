"""Retrieval systems: BM25 tokens and ties, dense retrieval over real Chroma + MiniLM, replay."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from guardrail.index import SentenceTransformerEmbedding
from guardrail_eval.errors import EvalSettingError, ResultsFormatError
from guardrail_eval.pool import CorpusEntry, Pool, Query, load_pool
from guardrail_eval.selection import SystemChoice, build_systems
from guardrail_eval.systems import BM25System, DenseSystem, ReplaySystem, code_tokens

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release"
RESULTS = RELEASE / "results" / "fixture__toy-minilm.json"


def _tie_pool() -> Pool:
    """A canonical and a distractor whose tokens are identical (`<` vs `<=`), and a stranger."""
    corpus = {
        "c_1": CorpusEntry(
            corpus_id="c_1", code="def below(x, y):\n    return x < y\n", label="correct"
        ),
        "c_2": CorpusEntry(
            corpus_id="c_2",
            code="def below(x, y):\n    return x <= y\n",
            label="incorrect",
            bug_type="off_by_one_boundary",
        ),
        "c_3": CorpusEntry(
            corpus_id="c_3", code="def shout(text):\n    return text.upper()\n", label="correct"
        ),
    }
    queries = [
        Query(
            query_id="q_1",
            query="is x below y",
            test_suite=["assert below(1, 2)", "assert not below(2, 2)"],
            correct_corpus_ids=["c_1"],
            paired_distractor_corpus_ids=["c_2"],
        ),
        Query(
            query_id="q_2",
            query="shout the text in upper case",
            test_suite=["assert shout('a') == 'A'"],
            correct_corpus_ids=["c_3"],
            paired_distractor_corpus_ids=[],
        ),
    ]
    return Pool(name="ties", corpus=corpus, queries=queries)


def test_code_tokens_split_identifiers_and_drop_stopwords() -> None:
    assert code_tokens("def parseISODate(self, raw_text): return None") == [
        "parse",
        "iso",
        "date",
        "parseisodate",
        "raw",
        "text",
        "raw_text",
    ]
    assert code_tokens("Return the sum of the list") == ["sum", "list"]


def test_bm25_ranks_by_score_and_scores_every_own_snippet() -> None:
    pool = load_pool(RELEASE)
    system = BM25System()
    system.prepare(pool)
    query = pool.queries[2]  # count the 1 bits: its canonical and distractors share the words
    retrieval = system.retrieve(pool, query, depth=10)
    scores = [item.score for item in retrieval.ranking]
    assert len(retrieval.ranking) == 10
    assert scores == sorted(scores, reverse=True)
    own = {*query.correct_corpus_ids, *query.paired_distractor_corpus_ids}
    assert retrieval.snippet_scores is not None
    assert set(retrieval.snippet_scores) == own
    assert {item.corpus_id for item in retrieval.ranking[:5]} == own
    ranked = {item.corpus_id: item.score for item in retrieval.ranking}
    assert all(retrieval.snippet_scores[cid] == ranked[cid] for cid in own)


def test_bm25_breaks_ties_by_seed_not_by_corpus_order() -> None:
    pool = _tie_pool()
    firsts = set()
    for seed in range(8):
        system = BM25System(seed=seed)
        system.prepare(pool)
        retrieval = system.retrieve(pool, pool.queries[0], depth=2)
        assert retrieval.ranking[0].score == retrieval.ranking[1].score  # a real tie
        firsts.add(retrieval.ranking[0].corpus_id)
        again = BM25System(seed=seed)
        again.prepare(pool)
        assert again.retrieve(pool, pool.queries[0], depth=2) == retrieval  # deterministic
    assert firsts == {"c_1", "c_2"}


def test_bm25_query_without_tokens_still_ranks() -> None:
    pool = _tie_pool()
    system = BM25System()
    system.prepare(pool)
    empty = pool.queries[0].model_copy(update={"query": "is it the"})
    retrieval = system.retrieve(pool, empty, depth=3)
    assert [item.score for item in retrieval.ranking] == [0.0, 0.0, 0.0]


def test_dense_retrieval_over_real_chroma_and_minilm(
    minilm: SentenceTransformerEmbedding,
) -> None:
    pool = load_pool(RELEASE)
    system = DenseSystem(minilm)
    system.prepare(pool)
    for query in pool.queries:
        retrieval = system.retrieve(pool, query, depth=10)
        scores = [item.score for item in retrieval.ranking]
        assert scores == sorted(scores, reverse=True)
        assert len(retrieval.ranking) == 10
        own = [*query.correct_corpus_ids, *query.paired_distractor_corpus_ids]
        assert retrieval.snippet_scores is not None
        assert set(retrieval.snippet_scores) == set(own)
        ranked = {item.corpus_id: item.score for item in retrieval.ranking}
        for cid in own:  # the same cosine similarity from the filtered and the plain search
            assert retrieval.snippet_scores[cid] == pytest.approx(ranked[cid], abs=1e-5)
    bits = system.retrieve(pool, pool.queries[2], depth=4)  # "count the 1 bits"
    assert {item.corpus_id for item in bits.ranking} <= {"c_0010", "c_0011", "c_0012", "c_0014"}


def test_dense_reindexing_the_same_pool_embeds_nothing(
    minilm: SentenceTransformerEmbedding, tmp_path: Path
) -> None:
    pool = load_pool(RELEASE)
    first = DenseSystem(minilm, index_dir=tmp_path)
    first.prepare(pool)
    assert first.index_report is not None and first.index_report.added == len(pool.corpus)
    second = DenseSystem(minilm, index_dir=tmp_path)
    second.prepare(pool)
    assert second.index_report is not None
    assert (second.index_report.added, second.index_report.unchanged) == (0, len(pool.corpus))
    assert second.retrieve(pool, pool.queries[0], 5) == first.retrieve(pool, pool.queries[0], 5)
    assert second.index_for(pool).count() == len(pool.corpus)
    other = load_pool(FIXTURES / "flat")  # another corpus gets its own collection
    second.prepare(other)
    assert second.index_for(other).name != second.index_for(pool).name
    assert second.index_for(other).count() == len(other.corpus)


def test_replay_keeps_the_stored_rank_order() -> None:
    pool = load_pool(RELEASE)
    system = ReplaySystem.load(RESULTS, pool)
    assert system.name == "fixture__toy-minilm"
    assert [q.query_id for q in system.queries(pool)] == ["q_0001", "q_0002", "q_0004"]
    retrieval = system.retrieve(pool, pool.queries[0], depth=10)
    # q_0001's rank 1 is listed second in the file, with the same similarity as rank 2
    assert [item.corpus_id for item in retrieval.ranking[:2]] == ["c_0002", "c_0001"]
    assert retrieval.snippet_scores is None
    assert len(system.retrieve(pool, pool.queries[0], depth=3).ranking) == 3


def test_replay_of_an_unknown_snippet_names_file_and_line(tmp_path: Path) -> None:
    pool = load_pool(RELEASE)
    results = tmp_path / "toy.json"
    text = RESULTS.read_text(encoding="utf-8").replace('"c_0013"', '"c_0999"')
    results.write_text(text, encoding="utf-8")
    line = next(n for n, row in enumerate(text.splitlines(), 1) if '"c_0999"' in row)
    with pytest.raises(ResultsFormatError) as caught:
        ReplaySystem.load(results, pool)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"{results}:{line}: per_query[")
    assert "'c_0999' is not in pool 'release'" in str(caught.value)


def test_replay_of_an_unknown_query_names_file_and_line(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(RELEASE, bundle)
    data = json.loads(RESULTS.read_text(encoding="utf-8"))
    data["per_query"][1]["query_id"] = "q_0003"
    results = bundle / "results" / "toy.json"
    results.write_text(json.dumps(data, indent=2), encoding="utf-8")
    with pytest.raises(ResultsFormatError, match=r"per_query\[1\]\.query_id: query 'q_0003'"):
        ReplaySystem.load(results, load_pool(bundle))


def test_build_systems_follows_the_choices() -> None:
    pool = load_pool(RELEASE)
    names = [s.name for s in build_systems(pool, [SystemChoice.ALL], [RESULTS])]
    assert names == ["dense-minilm", "bm25", "fixture__toy-minilm"]
    assert [s.name for s in build_systems(pool, [SystemChoice.BM25])] == ["bm25"]
    with pytest.raises(EvalSettingError, match="no retrieval system"):
        build_systems(pool, [])
    with pytest.raises(EvalSettingError, match="share the name 'fixture__toy-minilm'"):
        build_systems(pool, [], [RESULTS, RESULTS])


def _truncated_tie_pool() -> Pool:
    """Six snippets that differ only past MiniLM's 256 tokens (so they embed identically)."""
    head = "def below(x, y):\n    # " + "compare the two numbers carefully " * 60 + "\n"
    tails = ["x < y", "x <= y", "x > y", "y < x", "x == y", "x != y"]
    corpus = {
        f"c_{n}": CorpusEntry(
            corpus_id=f"c_{n}",
            code=f"{head}    return {tail}\n",
            label="correct" if n == 0 else "incorrect",
            bug_type=None if n == 0 else "wrong_operator",
        )
        for n, tail in enumerate(tails)
    }
    corpus["c_9"] = CorpusEntry(
        corpus_id="c_9", code="def shout(text):\n    return text.upper()\n", label="correct"
    )
    query = Query(
        query_id="q_1",
        query="compare the two numbers: is x below y",
        test_suite=["assert below(1, 2)", "assert not below(2, 2)"],
        correct_corpus_ids=["c_0"],
        paired_distractor_corpus_ids=[f"c_{n}" for n in range(1, 6)],
    )
    return Pool(name="truncated-ties", corpus=corpus, queries=[query])


def test_dense_ties_past_the_depth_are_fetched_and_shuffled_by_seed(
    minilm: SentenceTransformerEmbedding,
) -> None:
    """Before: Chroma's top 3 of six equal scores decided who was retrieved, and corpus order
    put the canonical first. Now the whole tied group is fetched, then shuffled per seed."""
    pool = _truncated_tie_pool()
    query = pool.queries[0]
    retrieved: set[str] = set()
    firsts: set[str] = set()
    for seed in range(12):
        system = DenseSystem(minilm, seed=seed)
        system.prepare(pool)
        retrieval = system.retrieve(pool, query, depth=3)
        assert len(retrieval.ranking) == 3
        scores = [item.score for item in retrieval.ranking]
        assert max(scores) - min(scores) <= 1e-6 * max(scores)  # a real tie
        retrieved |= {item.corpus_id for item in retrieval.ranking}
        firsts.add(retrieval.ranking[0].corpus_id)
        assert system.retrieve(pool, query, depth=3) == retrieval  # seeded: reproducible
    assert retrieved == {f"c_{n}" for n in range(6)}  # every tied snippet can be retrieved
    assert len(firsts) > 2 and firsts != {"c_0"}
