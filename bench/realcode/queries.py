"""Agent queries: a request in words, the function it means, and the tests a user would write.

``queries.json`` maps a library to a list of ``{"query", "expect", "tests"}``: ``expect`` is
``module:qualified_name`` of the intended function, ``tests`` 1-3 statements calling it by the
name a user would guess (not copied from its docstring). The bench checks each query's tests
against the real function in its real module before trusting them.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["MIN_PER_LIBRARY", "QUERIES_FILE", "Query", "QueryFileError", "load_queries"]

QUERIES_FILE = Path(__file__).with_name("queries.json")
MIN_PER_LIBRARY = 5
MAX_TESTS = 3


class QueryFileError(ValueError):
    """The queries file cannot be used; the message names the library and query."""


@dataclass(frozen=True, slots=True)
class Query:
    library: str
    query: str
    expect: str  # "module:qualified_name"
    tests: tuple[str, ...]

    @property
    def module(self) -> str:
        return self.expect.partition(":")[0]

    @property
    def qualname(self) -> str:
        return self.expect.partition(":")[2]


def load_queries(path: Path = QUERIES_FILE, libraries: set[str] | None = None) -> list[Query]:
    """Every query of ``path``, validated; ``libraries``: the ones that must each have enough.

    Raises:
        QueryFileError: not JSON, a field missing or of the wrong type, an ``expect`` that is not
            ``module:name``, tests that do not parse or assert nothing, a duplicate query, or a
            library with fewer than `MIN_PER_LIBRARY` queries.
    """
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise QueryFileError(f"{path}: cannot read queries: {exc}") from None
    if not isinstance(data, dict):
        raise QueryFileError(f"{path}: expected an object of library -> list of queries")
    queries: list[Query] = []
    for library, entries in data.items():
        if not isinstance(entries, list):
            raise QueryFileError(f"{path}: {library}: expected a list of queries")
        queries += [_query(path, library, n, entry) for n, entry in enumerate(entries, 1)]
    for library in sorted(libraries if libraries is not None else data.keys()):
        count = sum(q.library == library for q in queries)
        if count < MIN_PER_LIBRARY:
            raise QueryFileError(
                f"{path}: {library}: {count} queries, at least {MIN_PER_LIBRARY} needed"
            )
    seen: set[tuple[str, str]] = set()
    for q in queries:
        if (q.library, q.query) in seen:
            raise QueryFileError(f"{path}: {q.library}: query {q.query!r} appears twice")
        seen.add((q.library, q.query))
    return queries


def _query(path: Path, library: str, number: int, entry: Any) -> Query:
    where = f"{path}: {library} query {number}"
    if not isinstance(entry, dict) or set(entry) != {"query", "expect", "tests"}:
        raise QueryFileError(f"{where}: expected exactly the keys query, expect, tests")
    query, expect, tests = entry["query"], entry["expect"], entry["tests"]
    if not isinstance(query, str) or not query.strip():
        raise QueryFileError(f"{where}: 'query' must be a non-empty string")
    module, _, qualname = expect.partition(":") if isinstance(expect, str) else ("", "", "")
    if not (module and qualname and all(p.isidentifier() for p in module.split("."))):
        raise QueryFileError(f"{where}: 'expect' must be 'module:qualified_name', got {expect!r}")
    if not isinstance(tests, list) or not 1 <= len(tests) <= MAX_TESTS:
        raise QueryFileError(f"{where}: 'tests' must be a list of 1 to {MAX_TESTS} statements")
    for test in tests:
        if not isinstance(test, str):
            raise QueryFileError(f"{where}: every test must be a string")
        try:
            tree = ast.parse(test)
        except SyntaxError as exc:
            raise QueryFileError(f"{where}: test {test!r} does not parse: {exc.msg}") from None
        if not any(isinstance(node, ast.Assert | ast.Raise) for node in ast.walk(tree)):
            raise QueryFileError(f"{where}: test {test!r} asserts nothing")
    return Query(library=library, query=query, expect=expect, tests=tuple(tests))
