"""Shortcut pickers: each exploits one way a pool can leak its answer, ties split evenly."""

from __future__ import annotations

import pytest

from guardrail_eval.pool import CorpusEntry, Pool, Query
from guardrail_eval.shortcuts import (
    PICKERS,
    Candidate,
    ShortcutBaselines,
    construction_leaks,
    family_baselines,
    shortcut_baselines,
)

CANONICAL = "def clamp(v, lo, hi):\n    return max(lo, min(v, hi))\n"
MUTANT = "def clamp(v, lo, hi):\n    return max(lo, min(v, hi + 1))\n"
LONG_MUTANT = (
    "def clamp(v, lo, hi):\n    return max(lo, min(v, hi + 10 - 9 + 0 + 0 + 0 + 0 + 0 + 0))\n"
)
OTHER = "def clip(v):\n    return v\n"
TEST = "__doctest_example__('clamp(5, 0, 3)', '3')"


def _query() -> Query:
    return Query(
        query_id="q",
        query="clamp a value",
        test_suite=[TEST],
        correct_corpus_ids=["c_0001"],
        paired_distractor_corpus_ids=["c_0002", "c_0003~off_by_one"],
        entry_point="clamp",
    )


def _picked(name: str, candidates: list[Candidate]) -> list[str]:
    return [candidates[i].corpus_id for i in PICKERS[name](_query(), candidates)]


def test_each_picker_takes_what_its_leak_points_at() -> None:
    module = f"# the shipped module\n{CANONICAL}"
    candidates = [
        Candidate("c_0002", MUTANT, False, module),
        Candidate("c_0001", CANONICAL + f"    # {TEST[21:36]}\n", True, module),
        Candidate("c_0003~off_by_one", LONG_MUTANT, False, module),
        Candidate("c_0004", OTHER, False, None),
    ]
    assert _picked("lowest-id", candidates) == ["c_0001"]
    assert _picked("id-shape", candidates) == ["c_0003~off_by_one"]  # the odd id out
    assert _picked("name-match", candidates) == ["c_0002", "c_0001", "c_0003~off_by_one"]
    assert _picked("shortest", candidates) == ["c_0004"]
    assert _picked("longest", candidates) == ["c_0003~off_by_one"]
    assert _picked("docstring", candidates) == ["c_0001"]  # holds the test's source
    plain = [Candidate("a", CANONICAL, True, module), *candidates[:1], *candidates[2:]]
    assert [plain[i].corpus_id for i in PICKERS["verbatim-in-context"](_query(), plain)] == ["a"]
    # A natural function is verbatim in its module too: the name narrows it to the family first.
    natural = [Candidate("z", OTHER, False, OTHER), *plain]
    assert PICKERS["verbatim-in-context"](_query(), natural) == [0, 1]
    assert PICKERS["name-then-verbatim"](_query(), natural) == [1]
    # Among its near-clones, the canonical is the centre.
    family = [Candidate("m", MUTANT, False), Candidate("k", CANONICAL, True)]
    family.append(Candidate("n", CANONICAL.replace("max(lo", "min(lo"), False))
    assert _picked("structural-centre", family) == ["k"]


def test_exec_at_1_splits_ties_evenly_and_counts_empty_hand_overs_as_misses() -> None:
    same = [Candidate("a", CANONICAL, True), Candidate("b", MUTANT, False)]
    baselines = shortcut_baselines([(_query(), same), (_query(), [])], "by hand")
    assert baselines.n_queries == 2
    assert baselines.exec_at_1["id-shape"] == pytest.approx(0.25)  # (1/2 + 0) / 2
    assert baselines.exec_at_1["lowest-id"] == 0.5
    assert baselines.best_exec_at_1 == max(baselines.exec_at_1.values())
    assert baselines.exec_at_1[baselines.best] == baselines.best_exec_at_1


def test_family_baselines_read_each_snippets_module_and_the_query_family() -> None:
    def entry(cid: str, code: str, label: str) -> CorpusEntry:
        bug = None if label == "correct" else "off_by_one"
        return CorpusEntry.model_validate(
            {"corpus_id": cid, "code": code, "label": label, "bug_type": bug}
        )

    corpus = {
        "c_0001": entry("c_0001", CANONICAL, "correct"),
        "c_0002": entry("c_0002", MUTANT, "incorrect"),
        "c_0003~off_by_one": entry("c_0003~off_by_one", LONG_MUTANT, "incorrect"),
    }
    pool = Pool("hand", corpus, [_query()])
    seen: list[str] = []

    def module_text(corpus_id: str) -> str | None:
        seen.append(corpus_id)
        return CANONICAL if corpus_id == "c_0001" else None

    baselines = family_baselines(pool, module_text)
    assert sorted(seen) == sorted(corpus)
    assert baselines.exec_at_1["lowest-id"] == 1.0  # c_0001 before its mutants gives it away
    assert baselines.exec_at_1["verbatim-in-context"] == 1.0
    assert baselines.exec_at_1["name-match"] == pytest.approx(1 / 3, abs=1e-4)
    assert baselines.exec_at_1["id-shape"] == 0.0  # the odd id out is a mutant here
    assert baselines.chance == pytest.approx(1 / 3, abs=1e-4)  # a uniform pick of 3
    # lowest id and verbatim text beat chance by far more than 10 points: a leak, named, but
    # one query is too few to tell a leak from luck (3 standard errors of a uniform pick).
    assert baselines.chance_se == pytest.approx((2 / 9) ** 0.5, abs=1e-4)
    assert construction_leaks(baselines) == []
    many = baselines.model_copy(update={"chance_se": 0.01})
    assert construction_leaks(many) == [
        "verbatim-in-context 100.0% against chance 33.3%",
        "name-then-verbatim 100.0% against chance 33.3%",
        "lowest-id 100.0% against chance 33.3%",
    ]


def test_only_construction_pickers_past_chance_and_ten_points_are_leaks() -> None:
    scores = dict.fromkeys(PICKERS, 0.30)
    scores |= {"structural-centre": 0.95, "docstring": 0.41, "id-shape": 0.37}
    baselines = ShortcutBaselines(
        candidates="families",
        n_queries=166,
        exec_at_1=scores,
        best="structural-centre",
        best_exec_at_1=0.95,
        chance=0.28,
        chance_se=0.02,
    )
    # The family's shape (structural centre) is reported, never refused; 10 points is the line.
    assert construction_leaks(baselines) == ["docstring 41.0% against chance 28.0%"]
    assert construction_leaks(baselines.model_copy(update={"chance": None})) == []
