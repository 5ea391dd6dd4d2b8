"""The real-code benchmark's harness (bench/realcode): its arithmetic, its query file, its mutant
mapping and its ground-truth container, on small packages written here (never a download)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from realcode.groundtruth import DoctestItem, TestsItem, run_real
from realcode.mutants import plan_mutants
from realcode.queries import QUERIES_FILE, QueryFileError, load_queries
from realcode.results import (
    FunctionRecord,
    LibraryResult,
    MutantRecord,
    QueryRecord,
    combined,
    markdown_tables,
    summarize,
)
from realcode.sdists import SDISTS, SdistError, import_root, module_of, pins_key, read_pins

from guardrail.index import split_python_source


def query_record(query: str, ungated: str, gated: str, status: str = "verified") -> QueryRecord:
    return QueryRecord(query, "m:f", True, ungated, gated, status, 1, "verified/passed", 0.5)


def library() -> LibraryResult:
    functions = [
        FunctionRecord("m:a", "pass", "verified", "passed"),
        FunctionRecord("m:b", "pass", "failed", "tests_failed"),
        FunctionRecord("m:c", "pass", "unverifiable", "missing_context"),
        FunctionRecord("m:d", "pass", "unverifiable", "missing_dependency"),
        FunctionRecord("m:e", "fail", "verified", "passed"),
        FunctionRecord("m:g", "no_examples", "unverifiable", "no_tests"),
        FunctionRecord("m:h", "error", "unverifiable", "no_tests"),
        FunctionRecord("m:i", "unexercised", "unverifiable", "no_tests"),
    ]
    mutants = [
        MutantRecord("m:a", "wrong_operator", "line 3: '+' -> '-'", "fail", "verified", "passed"),
        MutantRecord("m:a", "off_by_one", "line 4: '1' -> '2'", "fail", "failed", "tests_failed"),
        MutantRecord("m:a", "off_by_one", "line 5: '0' -> '1'", "pass", "verified", "passed"),
        MutantRecord(
            "m:b", "off_by_one", "line 2: '0' -> '1'", "timeout", "failed", "tests_failed"
        ),
    ]
    queries = [
        query_record("same", "m:f", "m:f"),
        query_record("worse", "m:f", "m:x"),  # and an unrelated function verified
        query_record("better", "m:x", "m:f"),
        query_record("both wrong", "m:x", "m:y", "unverifiable"),
        QueryRecord("bad tests", "m:f", False, "m:f", "m:f", "verified", 1, None),
    ]
    return LibraryResult("lib", "1.0", functions, mutants, queries, {"total": 12.34})


def test_summary_counts_only_real_passing_functions_in_the_headline() -> None:
    summary = summarize(library())
    assert summary["indexed"] == 8
    # pass, fail and unexercised ran examples; no_examples and error did not
    assert summary["with_doctests"] == 6
    assert summary["unresolved"] == 1
    assert summary["real_passing"] == 4  # never an unexercised one
    assert summary["real_unexercised"] == 1
    assert summary["verified_of_passing"] == 1  # m:e is verified but its real doctest fails
    assert summary["verified_pct"] == 25.0
    assert summary["correct_failed"] == ["m:b"]
    # Reasons added after this harness was written are counted under their own name.
    assert summary["verdicts_of_passing"] == {
        "failed/tests_failed": 1,
        "unverifiable/missing_context": 1,
        "unverifiable/missing_dependency": 1,
        "verified/passed": 1,
    }


def test_summary_mutants_a_timeout_of_the_real_doctest_is_a_kill() -> None:
    summary = summarize(library())
    assert summary["mutants"] == 4
    assert summary["mutants_real_fails"] == 3
    assert summary["mutants_verified_while_real_fails"] == ["m:a (line 3: '+' -> '-')"]
    assert summary["mutants_equivalent"] == 1
    assert summary["mutants_equivalent_verified"] == 1


def test_summary_queries_worse_better_and_harm() -> None:
    summary = summarize(library())
    assert summary["queries"] == 5
    assert summary["queries_valid"] == 4
    assert summary["queries_invalid"] == ["bad tests"]
    assert (summary["top1_ungated"], summary["top1_gated"]) == (2, 2)
    assert summary["gate_worse"] == ["worse"]
    assert summary["gate_better"] == ["better"]
    assert summary["unrelated_verified"] == ["worse -> m:x"]  # unverifiable top is no harm
    assert summary["gate_s_per_query"] == 0.5  # the median: the bad-tests query took 0 s


def cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def test_markdown_tables_have_a_column_per_reason_and_consistent_rows() -> None:
    text = markdown_tables([summarize(library())])
    lines = text.splitlines()
    header = cells(lines[0])
    assert "unverifiable/missing_context" in lines[0]
    assert "verified/passed" not in lines[0]  # the verified column already says it
    assert lines[2].count("|") == lines[0].count("|")
    row = dict(zip(header, cells(lines[2]), strict=True))
    assert row["% verified"] == "25.0"
    assert row["never run by it"] == "1"
    assert row["correct failed"] == "1"
    second = [line for line in lines if line.startswith("| lib |")]
    assert second[0].endswith("| 0.50 | 12 |")  # gate seconds per query; wall seconds, rounded


def test_combined_row_adds_libraries_up() -> None:
    other = library()
    other.library = "other"
    other.functions = [FunctionRecord("n:a", "pass", "verified", "passed")]
    total = summarize(combined([library(), other]))
    assert total["library"] == "all"
    assert (total["real_passing"], total["verified_of_passing"]) == (5, 2)
    assert total["verified_pct"] == 40.0
    assert total["mutants"] == 8
    assert total["queries_valid"] == 8
    assert total["seconds"]["total"] == round(2 * 12.34, 1)


def test_empty_library_does_not_divide_by_zero() -> None:
    summary = summarize(LibraryResult("empty", "0"))
    assert summary["verified_pct"] == 0.0
    lines = markdown_tables([summary]).splitlines()
    assert len(lines) == 7  # two tables of a header, a rule and one row, a blank line between
    assert cells(lines[2])[:7] == ["empty 0", "0", "0", "0", "0", "0", "0.0"]


def test_shipped_queries_are_valid_and_cover_every_library() -> None:
    queries = load_queries(QUERIES_FILE, libraries=set(SDISTS))
    for name in SDISTS:
        assert sum(q.library == name for q in queries) >= 5, name
    assert all(1 <= len(q.tests) <= 3 for q in queries)
    first = next(q for q in queries if q.expect == "more_itertools.more:first")
    assert (first.module, first.qualname) == ("more_itertools.more", "first")


def write_queries(tmp_path: Path, entries: list[dict[str, Any]], copies: int = 5) -> Path:
    path = tmp_path / "queries.json"
    rows = [dict(e, query=f"{e['query']} {n}") for e in entries for n in range(copies)]
    path.write_text(json.dumps({"lib": rows}))
    return path


GOOD = {"query": "q", "expect": "pkg.mod:f", "tests": ["assert f(1) == 2"]}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({**GOOD, "expect": "f"}, "'expect' must be 'module:qualified_name'"),
        ({**GOOD, "tests": ["assert f(1) =="]}, "does not parse"),
        ({**GOOD, "tests": ["f(1)"]}, "asserts nothing"),
        ({**GOOD, "tests": []}, "1 to 3 statements"),
        ({**GOOD, "extra": 1}, "exactly the keys"),
    ],
)
def test_bad_query_entries_are_named(tmp_path: Path, entry: dict[str, Any], message: str) -> None:
    path = write_queries(tmp_path, [entry])
    with pytest.raises(QueryFileError, match=message) as caught:
        load_queries(path)
    assert "lib query 1" in str(caught.value)


def test_too_few_or_duplicate_queries_are_refused(tmp_path: Path) -> None:
    assert len(load_queries(write_queries(tmp_path, [GOOD]))) == 5
    with pytest.raises(QueryFileError, match="lib: 4 queries, at least 5"):
        load_queries(write_queries(tmp_path, [GOOD], copies=4))
    with pytest.raises(QueryFileError, match="other: 0 queries"):
        load_queries(write_queries(tmp_path, [GOOD]), libraries={"lib", "other"})
    path = tmp_path / "dup.json"
    path.write_text(json.dumps({"lib": [GOOD] * 5}))
    with pytest.raises(QueryFileError, match="appears twice"):
        load_queries(path)


def test_module_of_absolute_relative_and_package_files(tmp_path: Path) -> None:
    assert module_of(str(tmp_path / "pkg" / "mod.py"), tmp_path) == "pkg.mod"
    assert module_of("pkg/sub/__init__.py", tmp_path) == "pkg.sub"


def test_pins_come_from_flags_and_files_default_to_the_bench_s_own(tmp_path: Path) -> None:
    assert read_pins([], []) == SDISTS
    pins = tmp_path / "pins.txt"
    pins.write_text("# newer releases\nboltons==26.2.0  # a comment\n\ntoolz==1.2.0\n")
    chosen = read_pins(["humanize==4.17.0", "toolz==1.2.0"], [pins])
    assert chosen == {"humanize": "4.17.0", "toolz": "1.2.0", "boltons": "26.2.0"}
    # The cache key of a set: the same in any order, another for another set or version.
    assert pins_key(chosen) == pins_key(dict(reversed(chosen.items())))
    assert pins_key(chosen) != pins_key(chosen | {"toolz": "1.0.0"}) != pins_key(SDISTS)
    for bad, message in [
        (["toolz>=1"], "not an exact pin"),
        (["toolz==1.0.0", "toolz==1.2.0"], "pinned twice"),
    ]:
        with pytest.raises(SdistError, match=message):
            read_pins(bad, [])
    with pytest.raises(SdistError, match="cannot read the pin file"):
        read_pins([], [tmp_path / "missing.txt"])


def test_the_import_root_of_a_src_layout_is_its_src_folder(tmp_path: Path) -> None:
    flat, src = tmp_path / "flat-1.0", tmp_path / "srclib-1.0"
    for package in (flat / "flat", flat / "tests", src / "src" / "srclib", src / "tests"):
        package.mkdir(parents=True)
        (package / "__init__.py").write_text("")
    (src / "tasks.py").write_text("")
    assert import_root(flat) == flat
    assert import_root(src) == src / "src"


# A method (indented, in a class) after a module import it uses: the snippet's code is dedented
# and preceded by that import, so its line numbers differ from the file's.
MODULE = '''\
import math


class Ring:
    def scaled(self, values, factor):
        """Scale.

        >>> Ring().scaled([0, 1, 2], 3)
        [3, 6]
        """
        if not values:
            return []
        return [math.floor(v * factor) for v in values[1:]]
'''


def test_mutants_map_back_to_the_file_line_and_resplit_to_the_mutant_text() -> None:
    (snippet,) = split_python_source(MODULE, "pkg/ring.py")
    assert snippet.code.startswith("import math\n")
    lines = MODULE.split("\n")
    planned = plan_mutants(
        snippet.code, snippet.entry_point, snippet.start_line, snippet.end_line, lines, 3
    )
    assert len(planned) == 3
    assert len({m.bug_type for m in planned}) == 3  # one bug type after another
    for mutant in planned:
        patched = list(lines)
        if mutant.text is None:
            del patched[mutant.line - 1]
        else:
            assert patched[mutant.line - 1].startswith("        ")  # the method's indentation
            patched[mutant.line - 1] = mutant.text
        (again,) = split_python_source("\n".join(patched), "pkg/ring.py")
        assert again.code == mutant.code, mutant.description


def test_mutants_skip_lines_that_differ_in_the_file() -> None:
    (snippet,) = split_python_source(MODULE, "pkg/ring.py")
    lines = MODULE.split("\n")
    changed = next(n for n, line in enumerate(lines, 1) if "v * factor" in line)
    stale = [line.replace("v * factor", "factor * v") for line in lines]

    def targeted(file_lines: list[str]) -> set[int]:
        found = plan_mutants(
            snippet.code, snippet.entry_point, snippet.start_line, snippet.end_line, file_lines, 99
        )
        return {m.line for m in found}

    assert changed in targeted(lines)
    assert targeted(stale) == targeted(lines) - {changed}


PACKAGE = {
    "pkg/__init__.py": "from .core import double\n",
    "pkg/core.py": '''\
from ._util import FACTOR

def double(x):
    """Twice x.

    >>> double(2)
    4
    >>> print(double(1))
    2
    """
    return x * FACTOR


def wrong(x):
    """>>> wrong(1)
    3
    """
    return x


def plain(x):
    return x


def spin():
    """>>> spin()
    """
    while True:
        pass


def skipped(x):
    """Every call skipped: the example left runs without it.

    >>> xs = [1, 2]
    >>> skipped(xs)  # doctest: +SKIP
    99
    """
    return x


def _private(x):
    """The examples call the public name, another function.

    >>> double(3)
    6
    """
    return x
''',
    "pkg/_util.py": "FACTOR = 2\n\n\n"
    'def half(x):\n    """Half.\n\n    >>> half(4)\n    2\n    """\n'
    "    return x // 2\n",
    # batched on Python < 3.13: the name is bound to another def of the same file
    "pkg/switch.py": 'def _impl(x):\n    """\n    >>> impl(2)\n    2\n    """\n    return x\n\n\n'
    "if False:\n    def impl(x):\n        return x\nelse:\n    impl = _impl\n",
    "pkg/fallback.py": "try:\n    from ._util import half\nexcept ImportError:\n"
    '    def half(x):\n        """Half.\n\n        >>> half(4)\n        2\n        """\n'
    "        return x // 2\n",
}


@pytest.mark.docker
def test_real_doctests_run_in_a_container_in_the_real_module(
    docker_sandbox: Any, tmp_path: Path
) -> None:
    for name, text in PACKAGE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    for path in [tmp_path, *tmp_path.rglob("*")]:
        path.chmod(0o755)  # the container runs as nobody: the tree must be world-readable
    mutant_line = PACKAGE["pkg/core.py"].split("\n").index("    return x * FACTOR") + 1
    items: list[DoctestItem | TestsItem] = [
        DoctestItem.of("ok", "pkg.core:double"),
        DoctestItem.of("wrong", "pkg.core:wrong"),
        DoctestItem.of("none", "pkg.core:plain"),
        DoctestItem.of("missing", "pkg.core:nowhere"),
        DoctestItem.of("loops", "pkg.core:spin"),
        DoctestItem.of("mutant", "pkg.core:double", (mutant_line, "    return x + FACTOR")),
        DoctestItem.of("equivalent", "pkg.core:double", (mutant_line, "    return x * 2")),
        DoctestItem.of("after", "pkg.core:double"),  # the mutant did not leak into the module
        TestsItem("tests ok", "pkg.core", "double", ("assert double(3) == 6",)),
        TestsItem("tests bad", "pkg.core", "double", ("assert double(3) == 7",)),
        DoctestItem.of("no module", "pkg.absent:f"),
        DoctestItem.of("skipped", "pkg.core:skipped"),
        DoctestItem.of("other name", "pkg.core:_private"),
        DoctestItem.of("elsewhere", "pkg.fallback:half"),  # the name is _util's function
        DoctestItem.of("switched", "pkg.switch:impl", lines=(10, 11)),  # the def never runs
        DoctestItem.of("switch", "pkg.switch:_impl", lines=(1, 6)),
    ]
    real = run_real(tmp_path, items, image=docker_sandbox.image, timeout_s=2, name="test")
    outcome = {key: value.outcome for key, value in real.items()}
    assert real["no module"].outcome == "error", real["ok"].detail
    assert outcome == {
        "ok": "pass",
        "wrong": "fail",
        "none": "no_examples",
        "missing": "error",
        "loops": "timeout",
        "mutant": "fail",
        "equivalent": "pass",
        "after": "pass",
        "tests ok": "pass",
        "tests bad": "fail",
        "no module": "error",
        "skipped": "pass",
        "other name": "pass",
        "elsewhere": "pass",
        "switched": "pass",
        "switch": "pass",
    }
    # Passing without running the function's own code: not ground truth for it.
    exercised = {key for key, value in real.items() if value.exercised}
    assert {"skipped", "other name"}.isdisjoint(exercised)
    assert {"ok", "mutant", "equivalent", "after"} <= exercised
    assert [key for key, value in real.items() if not value.here] == ["elsewhere", "switched"]
    assert real["ok"].attempted == 2
    assert "ModuleNotFoundError" in real["no module"].detail
