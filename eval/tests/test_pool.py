"""Pool loading, checking and writing on fixtures in the release's exact format."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from guardrail.errors import InputError, SpecError
from guardrail_eval.errors import EvalError, EvalSettingError, OutputError, PoolFormatError
from guardrail_eval.pool import CorpusEntry, Pool, Query, load_pool, write_pool

FIXTURES = Path(__file__).parent / "fixtures"
RELEASE = FIXTURES / "release"
FLAT = FIXTURES / "flat"
MALFORMED = FIXTURES / "malformed"


@pytest.fixture
def release_copy(tmp_path: Path) -> Path:
    """A writable copy of the release fixture's data/ folder."""
    target = tmp_path / "bundle"
    shutil.copytree(RELEASE / "data", target / "data")
    return target


def edit_line(path: Path, line: int, change: dict[str, object], drop: str = "") -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    row = json.loads(lines[line - 1])
    row.update(change)
    row.pop(drop, None)
    lines[line - 1] = json.dumps(row)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_release_bundle_loads_with_its_optional_files() -> None:
    pool = load_pool(RELEASE)
    assert pool.name == "release"
    assert pool.source == RELEASE / "data"
    assert list(pool.corpus) == [
        "c_0001", "c_0002", "c_0003", "c_0004", "c_0005", "c_0006", "c_0007",
        "c_0008", "c_0010", "c_0011", "c_0012", "c_0013", "c_0014", "c_0015",
    ]  # fmt: skip
    assert [q.query_id for q in pool.queries] == ["q_0001", "q_0002", "q_0004"]
    assert pool.optional_files_used == {
        "distractor_metadata.jsonl": True,
        "execution_cache.jsonl": True,
    }
    assert len(pool.distractor_metadata) == 11
    assert len(pool.execution_cache) == 14


def test_flat_folder_loads_without_optional_files() -> None:
    pool = load_pool(FLAT, name="small")
    assert pool.name == "small"
    assert pool.source == FLAT
    assert len(pool.queries) == 2
    assert len(pool.corpus) == 9
    assert pool.optional_files_used == {
        "distractor_metadata.jsonl": False,
        "execution_cache.jsonl": False,
    }
    assert pool.distractor_metadata == []
    assert pool.execution_cache == []


def test_canonicals_have_no_bug_type_and_distractors_any_string() -> None:
    pool = load_pool(RELEASE)
    canonical_line = (RELEASE / "data" / "corpus.jsonl").read_text().splitlines()[0]
    assert "bug_type" not in json.loads(canonical_line)
    assert pool.corpus["c_0001"].bug_type is None
    assert pool.corpus["c_0001"].label == "correct"
    assert pool.corpus["c_0011"].bug_type == "wrong_operator"


def test_non_contiguous_ids_and_a_query_with_three_distractors() -> None:
    pool = load_pool(RELEASE)
    first, second, third = pool.queries
    assert first.paired_distractor_corpus_ids == ["c_0002", "c_0003", "c_0005"]
    assert [entry.corpus_id for entry in pool.distractors(first)] == ["c_0002", "c_0003", "c_0005"]
    assert pool.canonical(second).corpus_id == "c_0004"
    assert pool.canonical(third).corpus_id == "c_0010"


def test_unknown_fields_are_kept() -> None:
    pool = load_pool(RELEASE)
    assert pool.corpus["c_0001"].model_extra == {"domain": "string_processing"}
    assert pool.queries[1].model_extra == {"difficulty": "easy"}
    assert pool.queries[0].metadata["batch_usage"]["total_tokens"] == 6726


def test_metadata_is_passed_through_never_required(release_copy: Path) -> None:
    edit_line(release_copy / "data" / "queries.jsonl", 1, {}, drop="metadata")
    edit_line(release_copy / "data" / "queries.jsonl", 2, {"metadata": None})
    pool = load_pool(release_copy)
    assert pool.queries[0].metadata == {}
    assert pool.queries[1].metadata == {}
    assert pool.queries[2].metadata["model"] == "openai/gpt-5.4"


def test_multi_line_tests_and_setup_make_a_spec() -> None:
    pool = load_pool(RELEASE)
    clamp = pool.queries[1]
    assert clamp.test_suite[4].startswith("try:\n    clamp(1, 5, 0)\nexcept ValueError:")
    spec = pool.spec(clamp)
    assert spec.entry_point == "clamp"  # from the canonical: the release has no entry_point
    assert len(spec.tests) == 5
    bits = pool.queries[2]
    spec = pool.spec(bits, visible_tests=2)
    assert spec.entry_point == "count_set_bits"  # our pools' extra field
    assert spec.setup == "EXPECTED = {1: 1, 6: 2, 255: 8}"
    assert spec.tests == tuple(bits.test_suite[:2])
    assert pool.spec(bits, visible_tests=50).tests == tuple(bits.test_suite)


def test_visible_tests_below_one_is_a_setting_error() -> None:
    pool = load_pool(RELEASE)
    with pytest.raises(EvalSettingError, match="at least 1") as caught:
        pool.spec(pool.queries[0], visible_tests=0)
    assert isinstance(caught.value, InputError)


def test_entry_point_prefers_the_function_the_tests_call() -> None:
    helper_first = (
        "def _norm(s):\n    return s.strip()\n\ndef shout(s):\n    return _norm(s).upper()\n"
    )
    pool = Pool(
        name="code",
        corpus={"c1": CorpusEntry(corpus_id="c1", code=helper_first, label="correct")},
        queries=[
            Query(
                query_id="q1",
                query="shout",
                test_suite=["assert shout(' a ') == 'A'"],
                correct_corpus_ids=["c1"],
                paired_distractor_corpus_ids=[],
            )
        ],
    )
    assert pool.entry_point(pool.queries[0]) == "shout"


def test_a_canonical_without_a_function_names_its_line(release_copy: Path) -> None:
    edit_line(release_copy / "data" / "corpus.jsonl", 4, {"code": "VALUE = 3\n"})
    pool = load_pool(release_copy)
    with pytest.raises(PoolFormatError, match=r"corpus\.jsonl:4: code: .*no top-level function"):
        pool.entry_point(pool.queries[1])


def test_execution_cache_lookup_by_hashes() -> None:
    pool = load_pool(RELEASE)
    row = pool.execution_cache[0]
    found = pool.cached_execution(row["code_sha256"], row["tests_sha256"])
    assert found is row
    assert found["test_results"] == ["pass"] * 5
    assert pool.cached_execution("0" * 64, row["tests_sha256"]) is None


def test_optional_files_tolerate_unknown_and_missing_fields(release_copy: Path) -> None:
    (release_copy / "data" / "distractor_metadata.jsonl").write_text(
        '{"something": "else"}\n\n{"corpus_id": "c_0002", "nested": {"a": [1, 2]}}\n'
    )
    (release_copy / "data" / "execution_cache.jsonl").write_text('{"no_hash_keys": true}\n')
    pool = load_pool(release_copy)
    assert pool.distractor_metadata == [
        {"something": "else"},
        {"corpus_id": "c_0002", "nested": {"a": [1, 2]}},
    ]
    assert pool.cached_execution("x", "y") is None
    assert pool.optional_files_used["execution_cache.jsonl"] is True


def test_optional_file_with_bad_json_names_its_line(release_copy: Path) -> None:
    (release_copy / "data" / "execution_cache.jsonl").write_text('{"a": 1}\n{"b": \n')
    with pytest.raises(PoolFormatError, match=r"execution_cache\.jsonl:2: not valid JSON"):
        load_pool(release_copy)


# --- malformed fixtures: each error names the file, the line and the field ---------------------


def test_bad_json_on_line_3() -> None:
    with pytest.raises(PoolFormatError) as caught:
        load_pool(MALFORMED / "bad_json_line3")
    error = caught.value
    assert error.path == MALFORMED / "bad_json_line3" / "data" / "corpus.jsonl"
    assert error.line == 3
    assert str(error).startswith(f"{error.path}:3: not valid JSON")
    assert isinstance(error, InputError)
    assert isinstance(error, EvalError)


def test_missing_field_on_line_2() -> None:
    with pytest.raises(PoolFormatError) as caught:
        load_pool(MALFORMED / "missing_field_line2")
    error = caught.value
    assert (error.path.name, error.line, error.field) == ("queries.jsonl", 2, "test_suite")
    assert "required field is missing" in str(error)


def test_unknown_corpus_reference() -> None:
    with pytest.raises(PoolFormatError) as caught:
        load_pool(MALFORMED / "unknown_corpus_ref")
    error = caught.value
    assert (error.path.name, error.line) == ("queries.jsonl", 3)
    assert error.field == "paired_distractor_corpus_ids[2]"
    assert "unknown corpus id 'c_0099'" in str(error)


@pytest.mark.parametrize(
    ("filename", "line", "change", "drop", "field", "message"),
    [
        ("corpus.jsonl", 5, {"corpus_id": "c_0002"}, "", "corpus_id", "duplicate id 'c_0002'"),
        ("queries.jsonl", 3, {"query_id": "q_0001"}, "", "query_id", "first on line 1"),
        ("corpus.jsonl", 2, {"label": "buggy"}, "", "label", "'correct' or 'incorrect'"),
        ("corpus.jsonl", 7, {"code": 12}, "", "code", "valid string"),
        ("corpus.jsonl", 1, {}, "code", "code", "required field is missing"),
        ("queries.jsonl", 1, {"test_suite": ["assert f(1) =="]}, "", "test_suite[0]", "parse"),
        ("queries.jsonl", 2, {"test_suite": ["assert clamp(1, 0, 2) == 1", " "]}, "",
         "test_suite[1]", "empty test"),
        ("queries.jsonl", 2, {"test_suite": []}, "", "test_suite", "at least 1 item"),
        ("queries.jsonl", 2, {"test_setup": "import (", "entry_point": "clamp"}, "",
         "test_setup", "parse"),
        ("queries.jsonl", 2, {"entry_point": "not a name"}, "", "entry_point", "identifier"),
        ("queries.jsonl", 3, {"correct_corpus_ids": ["c_0011"]}, "", "correct_corpus_ids[0]",
         "labelled 'incorrect' in corpus.jsonl line 10, expected 'correct'"),
        ("queries.jsonl", 1, {"paired_distractor_corpus_ids": ["c_0002", "c_0002"]}, "",
         "paired_distractor_corpus_ids[1]", "listed twice"),
        ("queries.jsonl", 1, {"metadata": "gpt"}, "", "metadata", "valid dictionary"),
    ],
)  # fmt: skip
def test_malformed_lines_name_file_line_and_field(
    release_copy: Path,
    filename: str,
    line: int,
    change: dict[str, object],
    drop: str,
    field: str,
    message: str,
) -> None:
    path = release_copy / "data" / filename
    edit_line(path, line, change, drop)
    with pytest.raises(PoolFormatError) as caught:
        load_pool(release_copy)
    error = caught.value
    assert (error.path, error.line, error.field) == (path, line, field)
    assert message in str(error)
    assert str(error).startswith(f"{path}:{line}: {field}: ")


def test_a_line_that_is_not_an_object(release_copy: Path) -> None:
    path = release_copy / "data" / "queries.jsonl"
    path.write_text(path.read_text() + '["q_0009"]\n')
    with pytest.raises(
        PoolFormatError, match=r"queries\.jsonl:4: expected a JSON object, got a list"
    ):
        load_pool(release_copy)


def test_text_that_is_not_utf8(release_copy: Path) -> None:
    path = release_copy / "data" / "corpus.jsonl"
    path.write_bytes(path.read_bytes() + b'{"corpus_id": "\xff"}\n')
    with pytest.raises(PoolFormatError, match=r"corpus\.jsonl:15: not UTF-8"):
        load_pool(release_copy)


def test_blank_lines_are_skipped_and_line_numbers_stay_true(release_copy: Path) -> None:
    path = release_copy / "data" / "queries.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join([lines[0], "", lines[1], lines[2][:-1]]) + "\n")
    with pytest.raises(PoolFormatError) as caught:
        load_pool(release_copy)
    assert caught.value.line == 4


@pytest.mark.parametrize(
    ("layout", "message"),
    [
        ("missing", "no such pool folder"),
        ("file", "expected a folder"),
        ("empty", "no corpus.jsonl or queries.jsonl"),
        ("no_queries_file", "queries.jsonl: required file is missing"),
        ("empty_corpus", "the corpus is empty"),
    ],
)
def test_unusable_folders(tmp_path: Path, layout: str, message: str) -> None:
    target = tmp_path / "pool"
    if layout == "file":
        target.write_text("{}")
    elif layout == "empty":
        target.mkdir()
    elif layout == "no_queries_file":
        target.mkdir()
        shutil.copy(FLAT / "corpus.jsonl", target / "corpus.jsonl")
    elif layout == "empty_corpus":
        target.mkdir()
        (target / "corpus.jsonl").write_text("\n")
        shutil.copy(FLAT / "queries.jsonl", target / "queries.jsonl")
    with pytest.raises(PoolFormatError, match=message):
        load_pool(target)


# --- writing --------------------------------------------------------------------------------


def test_write_pool_reproduces_the_release_files_byte_for_byte(tmp_path: Path) -> None:
    folder = write_pool(load_pool(RELEASE), tmp_path / "out")
    assert folder == tmp_path / "out" / "data"
    for name in ("corpus.jsonl", "queries.jsonl", "distractor_metadata.jsonl",
                 "execution_cache.jsonl"):  # fmt: skip
        assert (folder / name).read_bytes() == (RELEASE / "data" / name).read_bytes(), name
    assert sorted(path.name for path in folder.iterdir()) == [
        "corpus.jsonl",
        "distractor_metadata.jsonl",
        "execution_cache.jsonl",
        "queries.jsonl",
    ]


def test_written_pool_loads_back_equal(tmp_path: Path) -> None:
    original = load_pool(FLAT)
    reloaded = load_pool(write_pool(original, tmp_path / "out").parent)
    assert reloaded.corpus == original.corpus
    assert reloaded.queries == original.queries
    assert not (tmp_path / "out" / "data" / "execution_cache.jsonl").exists()


def test_writing_a_pool_without_optional_rows_removes_stale_files(tmp_path: Path) -> None:
    write_pool(load_pool(RELEASE), tmp_path / "out")
    write_pool(load_pool(FLAT), tmp_path / "out")
    reloaded = load_pool(tmp_path / "out")
    assert reloaded.optional_files_used == {
        "distractor_metadata.jsonl": False,
        "execution_cache.jsonl": False,
    }
    assert len(reloaded.queries) == 2


def test_a_pool_built_in_code_writes_canonicals_without_bug_type(tmp_path: Path) -> None:
    pool = Pool(
        name="built",
        corpus={
            "c1": CorpusEntry(corpus_id="c1", code="def f(x):\n    return x\n", label="correct"),
            "c2": CorpusEntry(
                corpus_id="c2",
                code="def f(x):\n    return x + 1\n",
                label="incorrect",
                bug_type="off_by_one",
            ),
        },
        queries=[
            Query.model_validate(
                {
                    "query_id": "q1",
                    "query": "identity",
                    "test_suite": ["assert f(1) == 1", "assert f(0) == 0"],
                    "correct_corpus_ids": ["c1"],
                    "paired_distractor_corpus_ids": ["c2"],
                    "entry_point": "f",
                    "domain": "math_numerical",  # an unknown field, kept
                }
            )
        ],
    )
    folder = write_pool(pool, tmp_path)
    rows = [json.loads(line) for line in (folder / "corpus.jsonl").read_text().splitlines()]
    assert rows[0] == {
        "corpus_id": "c1",
        "code": "def f(x):\n    return x\n",
        "label": "correct",
        "source_entry_id": "",
    }
    assert rows[1]["bug_type"] == "off_by_one"
    query = json.loads((folder / "queries.jsonl").read_text())
    assert query["entry_point"] == "f"
    assert query["domain"] == "math_numerical"
    assert "test_setup" not in query  # empty: not written, the release has no such key


def test_an_inconsistent_pool_is_not_written(tmp_path: Path) -> None:
    pool = load_pool(FLAT)
    pool.queries[0].correct_corpus_ids = ["c_missing"]
    with pytest.raises(PoolFormatError, match="unknown corpus id 'c_missing'"):
        write_pool(pool, tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_failed_write_leaves_the_old_files_and_no_temporaries(tmp_path: Path) -> None:
    folder = write_pool(load_pool(FLAT), tmp_path)
    old_queries = (folder / "queries.jsonl").read_bytes()
    (folder / "corpus.jsonl").unlink()
    (folder / "corpus.jsonl").mkdir()  # a directory cannot be replaced by a file
    with pytest.raises(OutputError, match="cannot write"):
        write_pool(load_pool(RELEASE), tmp_path)
    assert (folder / "queries.jsonl").read_bytes() == old_queries
    assert sorted(path.name for path in folder.iterdir()) == ["corpus.jsonl", "queries.jsonl"]


def test_spec_errors_surface_for_pools_built_in_code() -> None:
    pool = Pool(
        name="built",
        corpus={"c1": CorpusEntry(corpus_id="c1", code="def f():\n    pass\n", label="correct")},
        queries=[
            Query(
                query_id="q1",
                query="q",
                test_suite=["assert f() is None", "assert ("],
                correct_corpus_ids=["c1"],
                paired_distractor_corpus_ids=[],
            )
        ],
    )
    with pytest.raises(SpecError):
        pool.spec(pool.queries[0])


def test_an_empty_pool_file_is_named(release_copy: Path) -> None:
    path = release_copy / "data" / "queries.jsonl"
    path.write_text("\n\n")
    with pytest.raises(PoolFormatError, match=r"queries\.jsonl: there are no queries") as caught:
        load_pool(release_copy)
    assert caught.value.path == path


def test_a_snippet_over_the_sandbox_limit_is_refused_at_load(release_copy: Path) -> None:
    from guardrail.precheck import MAX_CODE_BYTES

    path = release_copy / "data" / "corpus.jsonl"
    edit_line(path, 2, {"code": "def f():\n    return 1\n" + "#" * MAX_CODE_BYTES})
    with pytest.raises(
        PoolFormatError, match=r"corpus\.jsonl:2: code: the candidate takes"
    ) as caught:
        load_pool(release_copy)
    assert f"{MAX_CODE_BYTES:,}" in str(caught.value)


def test_a_huge_line_is_refused_without_reading_the_file_whole(release_copy: Path) -> None:
    from guardrail.textfiles import MAX_JSONL_LINE_BYTES

    path = release_copy / "data" / "corpus.jsonl"
    with path.open("r+b") as handle:  # a 100 MB last line (sparse: costs no disk)
        handle.truncate(path.stat().st_size + (100 << 20))
    lines = RELEASE.joinpath("data", "corpus.jsonl").read_text().count("\n")
    with pytest.raises(PoolFormatError, match=rf"corpus\.jsonl:{lines + 1}: the line is over"):
        load_pool(release_copy)
    assert MAX_JSONL_LINE_BYTES < 100 << 20


@pytest.mark.parametrize(
    ("test", "problem"),
    [
        ("assert f(" + "-" * 200_000 + "1) == 1", "too deeply nested"),
        ("assert f(" + "(" * 1_000 + ")" * 1_000 + ") == 1", "too many nested parentheses"),
        ("assert f(1) == " + repr("x" * (1 << 20)), "a spec may take at most"),
    ],
    ids=["nesting_bomb", "bracket_bomb", "too_large"],
)
def test_tests_that_would_crash_the_host_are_a_pool_error(
    release_copy: Path, test: str, problem: str
) -> None:
    path = release_copy / "data" / "queries.jsonl"
    edit_line(path, 1, {"test_suite": [test]})
    with pytest.raises(PoolFormatError, match=r"queries\.jsonl:1: test_suite") as caught:
        load_pool(release_copy)
    assert problem in str(caught.value)
