"""Pools in the ExecRetrieval release format: load, check, write.

A pool is a folder of JSON Lines files, either the release bundle (``DIR/data/*.jsonl``) or a
folder holding the files directly:

- ``corpus.jsonl`` (required): one `CorpusEntry` per line; ``bug_type`` is absent on canonicals.
- ``queries.jsonl`` (required): one `Query` per line.
- ``distractor_metadata.jsonl``, ``execution_cache.jsonl`` (optional): their schemas are not
  published, so each line only has to be a JSON object; rows are kept as they are, and
  `Pool.optional_files_used` says whether each file was found.

Unknown fields are accepted and kept everywhere. Our own pools add two fields to a query:
``entry_point`` (the name the tests call) and ``test_setup`` (code run before the tests).
Every problem is a `PoolFormatError` naming the file, the line and the field: bad JSON, a missing
or mistyped field, a test that does not parse, a duplicate id, a query naming an unknown corpus
id or one with the wrong label, a snippet over the sandbox's limit (`MAX_CODE_BYTES`), tests over
the spec limit (`MAX_SPEC_BYTES`). Files are read a line at a time, each line capped, so a huge
snippet costs an error, not the host's memory.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from guardrail.errors import SpecError
from guardrail.precheck import at_line, parse, size_problem
from guardrail.spec import Spec, spec_size_problem
from guardrail.textfiles import read_jsonl
from guardrail_eval.errors import (
    EvalSettingError,
    PoolFormatError,
    describe_validation_error,
    format_location,
)
from guardrail_eval.metrics import RankedItem, SnippetScores
from guardrail_eval.outputs import write_text_atomically
from guardrail_eval.poolcontext import CONTEXT_DIR, CorpusContext, missing_context_file
from guardrail_eval.units import suite_units

__all__ = [
    "CORPUS_FILE",
    "DISTRACTOR_METADATA_FILE",
    "EXECUTION_CACHE_FILE",
    "OPTIONAL_FILES",
    "QUERIES_FILE",
    "CorpusEntry",
    "Pool",
    "Query",
    "check_pool",
    "load_pool",
    "write_pool",
]

CORPUS_FILE = "corpus.jsonl"
QUERIES_FILE = "queries.jsonl"
DISTRACTOR_METADATA_FILE = "distractor_metadata.jsonl"
EXECUTION_CACHE_FILE = "execution_cache.jsonl"
OPTIONAL_FILES = (DISTRACTOR_METADATA_FILE, EXECUTION_CACHE_FILE)
_Model = TypeVar("_Model", bound=BaseModel)
_EXPECTED_LABEL = {"correct_corpus_ids": "correct", "paired_distractor_corpus_ids": "incorrect"}


class CorpusEntry(BaseModel):
    """One snippet of the corpus: a canonical (``label="correct"``) or a distractor."""

    model_config = ConfigDict(extra="allow")

    corpus_id: str = Field(min_length=1)
    code: str
    label: Literal["correct", "incorrect"]
    bug_type: str | None = None
    """Distractors only (any string; the release has 6 documented and 4 legacy names)."""
    source_entry_id: str = ""
    context: CorpusContext | None = None
    """Real-code pools only: where it lives under the pool's ``context/`` (`poolcontext`)."""


class Query(BaseModel):
    """One task: a description, its tests, its canonical(s) and its paired distractors."""

    model_config = ConfigDict(extra="allow")

    query_id: str = Field(min_length=1)
    query: str
    test_suite: list[str] = Field(min_length=1)
    """Test statements: single asserts or multi-line statements (a try/except block)."""
    correct_corpus_ids: list[str] = Field(min_length=1)
    paired_distractor_corpus_ids: list[str]
    entry_id: str = ""
    metadata: dict[str, Any] = Field(default_factory=dict)
    entry_point: str | None = None
    """Our pools' extra field: the function name the tests call."""
    test_setup: str = ""
    """Our pools' extra field: code the judge runs before the tests."""
    test_units: list[list[int]] | None = None
    """Our pools' extra field: the visible units (`guardrail_eval.units`), each the sorted
    indices of tests that run on their own; None: computed from the tests."""

    @property
    def units(self) -> tuple[tuple[int, ...], ...]:
        """The units a visible draw is made of: the stored ones, else `suite_units`."""
        if self.test_units is not None:
            return tuple(tuple(unit) for unit in self.test_units)
        return suite_units(tuple(self.test_suite))

    @field_validator("metadata", mode="before")
    @classmethod
    def _null_metadata_is_empty(cls, value: object) -> object:
        return {} if value is None else value

    @model_validator(mode="after")
    def _units_index_the_suite(self) -> Query:
        for unit in self.test_units or []:
            inside = bool(unit) and unit[0] >= 0 and unit[-1] < len(self.test_suite)
            if not inside or unit != sorted(set(unit)):
                raise ValueError(f"test_units: {unit} is not sorted indices of test_suite")
        if self.test_units is not None and not self.test_units:
            raise ValueError("test_units is empty: no visible draw could be made")
        return self

    @field_validator("entry_point")
    @classmethod
    def _entry_point_is_identifier(cls, value: str | None) -> str | None:
        if value is not None and not value.isidentifier():
            raise ValueError(f"{value!r} is not a Python identifier")
        return value


@dataclass
class Pool:
    """A loaded pool.

    Attributes:
        name: a short name (the folder's name unless given).
        corpus: snippets by id, in file order.
        queries: queries in file order.
        source: the folder the pool was loaded from; None when built in code.
        optional_files_used: for each optional file, whether it was found and loaded.
        distractor_metadata: rows of ``distractor_metadata.jsonl``, as they are.
        execution_cache: rows of ``execution_cache.jsonl``, as they are.
    """

    name: str
    corpus: dict[str, CorpusEntry]
    queries: list[Query]
    source: Path | None = None
    optional_files_used: dict[str, bool] = field(default_factory=dict)
    distractor_metadata: list[dict[str, Any]] = field(default_factory=list)
    execution_cache: list[dict[str, Any]] = field(default_factory=list)
    _lines: dict[tuple[str, str], int] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _entry_points: dict[str, str] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )
    _cache_index: dict[tuple[str, str], dict[str, Any]] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def canonical(self, query: Query) -> CorpusEntry:
        """The query's (first) canonical."""
        return self.corpus[query.correct_corpus_ids[0]]

    def distractors(self, query: Query) -> list[CorpusEntry]:
        """The query's paired distractors, in the query's order."""
        return [self.corpus[cid] for cid in query.paired_distractor_corpus_ids]

    def entry_point(self, query: Query) -> str:
        """The name the tests call.

        ``query.entry_point`` when set; otherwise the canonical's top-level function that the
        tests call, or its first top-level function when the tests call none by name.
        """
        if query.entry_point is not None:
            return query.entry_point
        if query.query_id not in self._entry_points:
            self._entry_points[query.query_id] = self._infer_entry_point(query)
        return self._entry_points[query.query_id]

    def spec(self, query: Query, visible_tests: int | None = None) -> Spec:
        """The query's spec; with ``visible_tests`` only its first N tests (the rest are hidden).

        Raises:
            EvalSettingError: ``visible_tests`` is below 1.
            SpecError: the tests or the setup do not parse.
        """
        tests = query.test_suite
        if visible_tests is not None:
            if visible_tests < 1:
                raise EvalSettingError(
                    f"visible tests must be at least 1, not {visible_tests}",
                    hint="use --visible-tests N with N >= 1, or leave it out to show all tests",
                )
            tests = tests[:visible_tests]
        return Spec.build(tests, self.entry_point(query), setup=query.test_setup)

    def ranked_item(
        self, query: Query, corpus_id: str, *, passes_all_tests: bool, score: float | None = None
    ) -> RankedItem:
        """A `RankedItem` for a snippet of this pool as retrieved for ``query``."""
        entry = self.corpus[corpus_id]
        return RankedItem(
            corpus_id=corpus_id,
            passes_all_tests=passes_all_tests,
            is_correct_id=corpus_id in query.correct_corpus_ids,
            bug_type=entry.bug_type or "",
            is_paired_distractor=corpus_id in query.paired_distractor_corpus_ids,
            score=score,
        )

    def snippet_scores(self, query: Query, scores: Mapping[str, float]) -> SnippetScores | None:
        """The scores of all the query's canonicals and distractors; None if any is missing."""
        ids = [*query.correct_corpus_ids, *query.paired_distractor_corpus_ids]
        if any(cid not in scores for cid in ids):
            return None
        return SnippetScores(
            canonical=tuple(float(scores[cid]) for cid in query.correct_corpus_ids),
            distractors=tuple(float(scores[cid]) for cid in query.paired_distractor_corpus_ids),
        )

    def cached_execution(self, code_sha256: str, tests_sha256: str) -> dict[str, Any] | None:
        """The execution-cache row keyed by ``(code_sha256, tests_sha256)``, if the file had one.

        Only rows holding both keys as strings can be found this way; the file's schema is not
        published, so other rows stay available in `execution_cache` as they are.
        """
        if self._cache_index is None:
            self._cache_index = {
                (row["code_sha256"], row["tests_sha256"]): row
                for row in self.execution_cache
                if isinstance(row.get("code_sha256"), str)
                and isinstance(row.get("tests_sha256"), str)
            }
        return self._cache_index.get((code_sha256, tests_sha256))

    def location(self, filename: str, key: str) -> tuple[Path, int | None]:
        """The file and 1-based line of the row keyed ``key`` in ``filename`` (line None: not
        loaded from files, or no such row)."""
        folder = self.source if self.source is not None else Path(f"<pool {self.name}>")
        return folder / filename, self._lines.get((filename, key))

    def relabelled(self, corpus: dict[str, CorpusEntry], queries: list[Query]) -> Pool:
        """A copy with another corpus and queries that still knows the files' lines.

        Raises:
            PoolFormatError: the new labels contradict each other (see `check_pool`).
        """
        copy = Pool(
            self.name,
            corpus,
            queries,
            self.source,
            dict(self.optional_files_used),
            self.distractor_metadata,
            self.execution_cache,
        )
        copy._lines = dict(self._lines)
        copy._entry_points = dict(self._entry_points)
        check_pool(copy)
        return copy

    def _infer_entry_point(self, query: Query) -> str:
        canonical = self.canonical(query)
        path, line = self.location(CORPUS_FILE, canonical.corpus_id)
        try:
            module = parse(canonical.code)
        except SyntaxError as exc:
            raise PoolFormatError(
                path, line, "code", f"canonical {canonical.corpus_id!r} does not parse: {exc.msg}"
            ) from None
        defined = [
            node.name
            for node in module.body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        ]
        if not defined:
            raise PoolFormatError(
                path,
                line,
                "code",
                f"canonical {canonical.corpus_id!r} defines no top-level function, so the entry "
                f"point of query {query.query_id!r} is unknown; give the query an 'entry_point'",
            )
        for name in _called_names(query.test_suite):
            if name in defined:
                return name
        return defined[0]


def load_pool(path: Path, name: str | None = None) -> Pool:
    """Load a pool from a release directory (with ``data/``) or a folder of JSONL files.

    Raises:
        PoolFormatError: a file is missing or malformed, or the files contradict each other.
    """
    folder = _data_folder(path)
    pool = Pool(
        name=name or _default_name(folder),
        corpus={},
        queries=[],
        source=folder,
    )
    corpus_path = folder / CORPUS_FILE
    for line, row in _read_jsonl(corpus_path):
        entry = _validate(CorpusEntry, row, corpus_path, line)
        too_large = size_problem(entry.code)
        if too_large is not None:
            raise PoolFormatError(corpus_path, line, "code", too_large)
        _claim_id(pool, CORPUS_FILE, entry.corpus_id, "corpus_id", line)
        pool.corpus[entry.corpus_id] = entry
    queries_path = folder / QUERIES_FILE
    for line, row in _read_jsonl(queries_path):
        query = _validate(Query, row, queries_path, line)
        _check_code(query, queries_path, line)
        _claim_id(pool, QUERIES_FILE, query.query_id, "query_id", line)
        pool.queries.append(query)
    for filename in OPTIONAL_FILES:
        optional = folder / filename
        used = optional.is_file()
        pool.optional_files_used[filename] = used
        rows = [row for _, row in _read_jsonl(optional)] if used else []
        if filename == DISTRACTOR_METADATA_FILE:
            pool.distractor_metadata = rows
        else:
            pool.execution_cache = rows
    check_pool(pool)
    missing = missing_context_file(pool)
    if missing is not None:
        path, at = pool.location(CORPUS_FILE, missing)
        problem = f"no such file in the pool's {CONTEXT_DIR}/ folder"
        raise PoolFormatError(path, at, "context.file", problem)
    return pool


def check_pool(pool: Pool) -> None:
    """Check that the pool is usable: not empty, and every query's ids exist with the right label.

    Raises:
        PoolFormatError: naming the file and line when the pool was loaded from files.
    """
    if not pool.corpus:
        path, _ = pool.location(CORPUS_FILE, "")
        raise PoolFormatError(path, None, "", "the corpus is empty")
    if not pool.queries:
        path, _ = pool.location(QUERIES_FILE, "")
        raise PoolFormatError(path, None, "", "there are no queries")
    for query in pool.queries:
        path, line = pool.location(QUERIES_FILE, query.query_id)
        seen: set[str] = set()
        for field_name, expected in _EXPECTED_LABEL.items():
            for index, cid in enumerate(getattr(query, field_name)):
                where = f"{field_name}[{index}]"
                entry = pool.corpus.get(cid)
                if entry is None:
                    raise PoolFormatError(
                        path, line, where, f"unknown corpus id {cid!r} (not in {CORPUS_FILE})"
                    )
                if cid in seen:
                    raise PoolFormatError(path, line, where, f"corpus id {cid!r} is listed twice")
                seen.add(cid)
                if entry.label != expected:
                    entry_path, entry_line = pool.location(CORPUS_FILE, cid)
                    at = f"{entry_path.name} line {entry_line}" if entry_line else entry_path.name
                    raise PoolFormatError(
                        path,
                        line,
                        where,
                        f"corpus id {cid!r} is labelled {entry.label!r} in {at}, "
                        f"expected {expected!r}",
                    )


def write_pool(pool: Pool, directory: Path) -> Path:
    """Write ``pool`` in the release format under ``directory/data/`` and return that folder.

    Canonicals are written without a ``bug_type`` key; unknown fields are kept; the optional
    files are written when the pool has rows for them (and a stale one is removed). Everything is
    serialised before any file is touched and each file is replaced atomically.

    Raises:
        PoolFormatError: the pool is not consistent (see `check_pool`).
        OutputError: a file cannot be written.
    """
    check_pool(pool)
    folder = directory / "data"
    files = {
        folder / CORPUS_FILE: _jsonl(_corpus_row(entry) for entry in pool.corpus.values()),
        folder / QUERIES_FILE: _jsonl(_query_row(query) for query in pool.queries),
    }
    optional_rows = {
        DISTRACTOR_METADATA_FILE: pool.distractor_metadata,
        EXECUTION_CACHE_FILE: pool.execution_cache,
    }
    for filename, rows in optional_rows.items():
        if rows:
            files[folder / filename] = _jsonl(rows)
    write_text_atomically(files)
    for filename, rows in optional_rows.items():
        stale = folder / filename
        if not rows and stale.is_file():
            stale.unlink()
    return folder


def _data_folder(path: Path) -> Path:
    if not path.exists():
        raise PoolFormatError(path, None, "", "no such pool folder")
    if not path.is_dir():
        raise PoolFormatError(
            path, None, "", f"expected a folder holding {CORPUS_FILE} and {QUERIES_FILE}"
        )
    for folder in (path / "data", path):
        if (folder / CORPUS_FILE).is_file() or (folder / QUERIES_FILE).is_file():
            return folder
    raise PoolFormatError(
        path,
        None,
        "",
        f"no {CORPUS_FILE} or {QUERIES_FILE} here or in data/; expected the downloaded "
        "release folder or a folder holding its JSONL files",
    )


def _default_name(folder: Path) -> str:
    resolved = folder.resolve()
    return resolved.parent.name if resolved.name == "data" else resolved.name


def _read_jsonl(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(line number, object) for every non-blank line."""

    def error(line: int | None, problem: str) -> PoolFormatError:
        return PoolFormatError(path, line, "", problem)

    for number, row in read_jsonl(path, error, missing="required file is missing"):
        _check_unicode(row, path, number)
        yield number, row


def _check_unicode(row: dict[str, Any], path: Path, line: int) -> None:
    """Refuse a ``\\udXXX`` escape that is not half of a pair: no index, embedding or file
    can hold the lone surrogate it decodes to, so it would crash the eval after its work."""
    text = json.dumps(row, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        found = f"\\u{ord(text[exc.start]):04x}"
        raise PoolFormatError(
            path, line, "", f"a string holds {found}, a lone surrogate (not valid Unicode)"
        ) from None


def _validate(model: type[_Model], row: dict[str, Any], path: Path, line: int) -> _Model:
    try:
        return model.model_validate(row, strict=True)
    except ValidationError as exc:
        location, problem = describe_validation_error(exc)
        raise PoolFormatError(path, line, format_location(location), problem) from None


def _check_code(query: Query, path: Path, line: int) -> None:
    too_large = spec_size_problem(query.test_suite, query.test_setup)
    if too_large is not None:
        raise PoolFormatError(path, line, "test_suite", too_large)
    pieces = [(f"test_suite[{index}]", test) for index, test in enumerate(query.test_suite)]
    pieces.append(("test_setup", query.test_setup))
    for where, source in pieces:
        if where != "test_setup" and not source.strip():
            raise PoolFormatError(path, line, where, "empty test")
        try:
            parse(source)
        except SyntaxError as exc:
            shown = source if len(source) <= 200 else source[:200] + "..."
            problem = f"does not parse{at_line(exc)}: {exc.msg}: {shown!r}"
            raise PoolFormatError(path, line, where, problem) from None


def _claim_id(pool: Pool, filename: str, key: str, field_name: str, line: int) -> None:
    first = pool._lines.get((filename, key))
    if first is not None:
        path = pool.location(filename, key)[0]
        raise PoolFormatError(
            path, line, field_name, f"duplicate id {key!r} (first on line {first})"
        )
    pool._lines[(filename, key)] = line


def _called_names(tests: list[str]) -> Iterator[str]:
    for test in tests:
        try:
            tree = parse(test)
        except SyntaxError as exc:
            raise SpecError(f"test does not parse{at_line(exc)}: {exc.msg}") from None
        calls = [node for node in ast.walk(tree) if isinstance(node, ast.Call)]
        for call in sorted(calls, key=lambda node: (node.lineno, node.col_offset)):
            if isinstance(call.func, ast.Name):
                yield call.func.id


def _corpus_row(entry: CorpusEntry) -> dict[str, Any]:
    row = entry.model_dump(mode="json")
    if entry.bug_type is None:
        del row["bug_type"]
    if entry.context is None:
        del row["context"]
    return row


def _query_row(query: Query) -> dict[str, Any]:
    row = query.model_dump(mode="json")
    if query.entry_point is None:
        del row["entry_point"]
    if not query.test_setup:
        del row["test_setup"]
    if query.test_units is None:
        del row["test_units"]
    return row


def _jsonl(rows: Iterator[dict[str, Any]] | list[dict[str, Any]]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)
