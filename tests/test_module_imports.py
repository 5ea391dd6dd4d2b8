"""A module's imports and syntax tree are worked out once per text, and an edit is a new text.

`guardrail.module_imports` caches by a digest of the text; `guardrail.context.ModuleReads`
shares one call's reads of the tree between its candidates, and a later call reads again.
"""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest

from guardrail import module_imports
from guardrail.context import CodeContext, ModuleReads, build_job_context, context_from_metadata
from guardrail.module_imports import imports_of, parsed_module


def test_imports_are_the_texts_own_and_an_edit_changes_them() -> None:
    first = "import json\nfrom . import sibling\n\ndef f():\n    from .deep import x\n"
    assert imports_of(first, "pkg") == ("json", "pkg", "pkg.sibling", "pkg.deep", "pkg.deep.x")
    assert imports_of(first, "other") == ("json", "other", "other.sibling", "other.deep",
                                          "other.deep.x")  # fmt: skip
    edited = first.replace("json", "csv")
    assert imports_of(edited, "pkg")[0] == "csv"
    assert imports_of(first, "pkg")[0] == "json"  # the old text keeps its own answer


def test_text_that_does_not_parse_imports_nothing_and_is_not_parsed_twice() -> None:
    assert imports_of("def broken(:\n", "pkg") == ()
    assert imports_of("(" * 10_000, "pkg") == ()  # exhausts the parser: no crash, no imports


def test_the_imports_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(module_imports, "CACHE_ENTRIES", 3)
    for n in range(10):
        imports_of(f"import m{n}\n", "pkg")
    assert len(module_imports._cache) == 3


def test_a_parsed_module_is_shared_for_one_text_and_kept_within_its_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = "def f():\n    return 1\n"
    assert parsed_module(text) is parsed_module(text)
    assert parsed_module(text + "\n") is not parsed_module(text)
    budget = 12 * len(text)  # a quarter of it (one text's cap) holds each text below
    monkeypatch.setattr(module_imports, "_trees", OrderedDict())  # what earlier tests kept
    monkeypatch.setattr(module_imports, "TREE_SOURCE_BYTES", budget)
    for n in range(20):
        parsed_module(f"x = {n + 10}\n" + text)
    kept = module_imports._trees.values()
    assert 0 < len(kept) < 20
    assert sum(size for _, size in kept) <= budget
    with pytest.raises(SyntaxError):
        parsed_module("def broken(:\n")


def _context(root: Path) -> tuple[str, CodeContext | None]:
    package = root / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "helper.py").write_text("LIMIT = 1\n", encoding="utf-8")
    (package / "core.py").write_text(
        "from pkg.helper import LIMIT\n\ndef f():\n    return LIMIT\n", encoding="utf-8"
    )
    metadata = {"root": str(root), "file": "pkg/core.py", "module": "pkg.core",
                "qualified_name": "f"}  # fmt: skip
    return "def f():\n    return LIMIT + 1\n", context_from_metadata(metadata, root)


def test_one_calls_reads_are_shared_and_a_later_call_reads_the_edited_file(
    tmp_path: Path,
) -> None:
    code, context = _context(tmp_path)
    assert context is not None
    reads = ModuleReads()
    first = build_job_context(code, context, reads)
    (tmp_path / "pkg" / "helper.py").write_text("LIMIT = 2\n", encoding="utf-8")
    same_call = build_job_context(code, context, reads)
    assert same_call["modules"]["pkg.helper"]["source"] == "LIMIT = 1\n"
    assert same_call["modules"]["pkg.helper"] is not first["modules"]["pkg.helper"]
    later = build_job_context(code, context)
    assert later["modules"]["pkg.helper"]["source"] == "LIMIT = 2\n"
