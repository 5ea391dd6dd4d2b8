"""Pool building: task sources -> release-format pool; the shipped built-in pool is up to date."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from guardrail.gate import Gate
from guardrail.spec import Spec
from guardrail_eval.build import (
    GENERATOR,
    REPORT_FILE,
    BuildReport,
    PoolBuildError,
    build_pool,
    write_built_pool,
)
from guardrail_eval.errors import FileFormatError
from guardrail_eval.mutations import BugType, changed_lines
from guardrail_eval.pool import Pool, load_pool
from guardrail_eval.pools import TaskSource
from guardrail_eval.pools.builtin import DATA_DIR, MIN_TESTS, load_builtin_pool, load_task_sources

BUG_TYPES = {bug.value for bug in BugType}


@pytest.fixture(scope="module")
def sources() -> list[TaskSource]:
    return load_task_sources()


@pytest.fixture(scope="module")
def shipped() -> Pool:
    return load_builtin_pool()


def one_per_domain(sources: list[TaskSource], count: int) -> list[TaskSource]:
    firsts = {task.domain: task for task in reversed(sources)}
    return [firsts[domain] for domain in sorted(firsts)[:count]]


def test_builtin_task_sources_cover_ten_domains(sources: list[TaskSource]) -> None:
    assert len(sources) >= 60
    assert len({task.domain for task in sources}) == 10
    assert len({task.id for task in sources}) == len(sources)
    assert all(len(task.tests) >= MIN_TESTS for task in sources)


def test_a_bad_task_source_names_its_file_and_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = tmp_path / "broken_tasks"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "geometry.py").write_text(
        textwrap.dedent(
            """\
            TASKS = [
                {
                    "id": "g1",
                    "domain": "geometry",
                    "query": "area",
                    "entry_point": "area",
                    "code": "def area(w, h):\\n    return w * h\\n",
                    "tests": ["assert area(1, 2) == 2"] * 5,
                },
                {
                    "id": "g2",
                    "domain": "geometry",
                    "query": "perimeter",
                    "entry_point": "perimeter",
                    "code": "def perimeter(w, h):\\n    return 2 * (w + h)\\n",
                    "tests": ["assert perimeter(1, 2) == 6", "assert perimeter(1, 2) =="],
                },
            ]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(FileFormatError) as caught:
        load_task_sources("broken_tasks")
    assert caught.value.path == package / "geometry.py"
    assert caught.value.line == 16  # the second entry's "tests"
    assert caught.value.field == "TASKS[1].tests"
    assert "test 2 does not parse" in caught.value.problem


@pytest.mark.docker
def test_build_pool_writes_the_release_format(
    gate: Gate, sources: list[TaskSource], tmp_path: Path
) -> None:
    tasks = one_per_domain(sources, 3)
    pool, report = build_pool(tasks, gate, seed=5, name="mini")
    assert report.tasks == 3 and report.excluded == [] and report.queries == 3
    folder = write_built_pool(pool, report, tmp_path)
    loaded = load_pool(tmp_path)
    assert loaded.source == folder
    assert [q.query_id for q in loaded.queries] == ["q_0001", "q_0002", "q_0003"]
    assert list(loaded.corpus) == [f"c_{n:04d}" for n in range(1, len(loaded.corpus) + 1)]
    assert len(loaded.corpus) == report.corpus == 3 + report.mutation.kept
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    for task, query in zip(tasks, loaded.queries, strict=True):
        assert query.query == task.query and query.test_suite == list(task.tests)
        assert query.entry_point == task.entry_point and query.test_setup == task.setup
        assert query.metadata == {
            "generator": GENERATOR,
            "builder_version": report.builder_version,
            "seed": 5,
            "task_id": task.id,
        }
        assert query.entry_id.startswith(f"exec_{task.domain}_")
        canonical = loaded.canonical(query)
        assert canonical.code == task.code and canonical.label == "correct"
        assert canonical.source_entry_id == query.entry_id
        canonical_row = next(row for row in rows if row["corpus_id"] == canonical.corpus_id)
        assert "bug_type" not in canonical_row
        distractors = loaded.distractors(query)
        assert 1 <= len(distractors) <= 4
        assert all(d.label == "incorrect" and d.bug_type in BUG_TYPES for d in distractors)
    assert len(loaded.distractor_metadata) == report.mutation.kept
    saved = BuildReport.model_validate_json((folder / REPORT_FILE).read_text())
    # ... with the shortcut baselines over each family: c_0001 before its mutants gives the
    # canonical away to the lowest-id picker, and the report says so.
    assert saved.shortcuts is not None and saved.shortcuts.exec_at_1["lowest-id"] == 1.0
    assert saved == report.model_copy(update={"shortcuts": saved.shortcuts})


@pytest.mark.docker
def test_same_seed_same_files(gate: Gate, sources: list[TaskSource], tmp_path: Path) -> None:
    tasks = one_per_domain(sources, 2)
    folders = []
    for run in ("a", "b"):
        pool, report = build_pool(tasks, gate, seed=11)
        folders.append(write_built_pool(pool, report, tmp_path / run))
    for name in ("corpus.jsonl", "queries.jsonl", "distractor_metadata.jsonl"):
        assert (folders[0] / name).read_bytes() == (folders[1] / name).read_bytes()


@pytest.mark.docker
def test_a_canonical_that_fails_its_tests_is_named(gate: Gate, sources: list[TaskSource]) -> None:
    good = one_per_domain(sources, 1)[0]
    planted = (*good.tests[:-1], "assert False, 'planted'")
    bad = TaskSource.model_validate({**good.model_dump(), "id": "broken_01", "tests": planted})
    with pytest.raises(PoolBuildError, match="broken_01") as caught:
        build_pool([good, bad], gate)
    assert good.id not in str(caught.value)
    pool, report = build_pool([good, bad], gate, strict=False)
    assert [(e.task_id, e.reason.split(":")[0]) for e in report.excluded] == [
        ("broken_01", "canonical does not verify (failed)")
    ]
    assert [q.metadata["task_id"] for q in pool.queries] == [good.id]


def test_shipped_builtin_pool_matches_its_task_sources(
    shipped: Pool, sources: list[TaskSource]
) -> None:
    report = BuildReport.model_validate_json((DATA_DIR / REPORT_FILE).read_text())
    by_id = {task.id: task for task in sources}
    built = [query.metadata["task_id"] for query in shipped.queries]
    excluded = [e.task_id for e in report.excluded]
    assert sorted(built + excluded) == sorted(by_id), "rebuild: build_builtin_pool(gate)"
    assert len(built) >= 60
    for query in shipped.queries:
        task = by_id[query.metadata["task_id"]]
        assert shipped.canonical(query).code == task.code, "rebuild: build_builtin_pool(gate)"
        assert query.test_suite == list(task.tests) and query.test_setup == task.setup
        for distractor in shipped.distractors(query):
            assert distractor.bug_type in BUG_TYPES
            assert changed_lines(task.code, distractor.code) == 1


@pytest.mark.docker
def test_shipped_builtin_pool_verifies_in_the_real_sandbox(gate: Gate, shipped: Pool) -> None:
    codes: list[str] = []
    specs: list[Spec] = []
    for query in shipped.queries:
        for entry in (shipped.canonical(query), *shipped.distractors(query)):
            codes.append(entry.code)
            specs.append(shipped.spec(query))
    verdicts = gate.verify(codes, specs)
    labels = [shipped.corpus[cid].label for q in shipped.queries for cid in
              (*q.correct_corpus_ids, *q.paired_distractor_corpus_ids)]  # fmt: skip
    for code, label, verdict in zip(codes, labels, verdicts, strict=True):
        if label == "correct":
            assert verdict.verified, (code, verdict.message)
        else:
            assert verdict.passed_tests and verdict.failed_tests, (code, verdict.outcomes)
