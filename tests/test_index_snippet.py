"""`Snippet`: validation, content ids and the metadata mapping Chroma stores."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

import guardrail.index
from guardrail.errors import SpecError
from guardrail.index import Snippet, decode_metadata

ADD = "def add(a, b):\n    return a + b\n"


def _snippet(**changes: object) -> Snippet:
    fields: dict[str, object] = {
        "code": ADD,
        "entry_point": "add",
        "qualified_name": "add",
        "file": "/src/math.py",
        "start_line": 3,
        "end_line": 4,
        "tests": ["assert add(1, 2) == 3", "try:\n    add(1)\nexcept TypeError:\n    pass"],
        "setup": "import math",
        "extra": {"language": "python", "stars": 3, "weight": 0.5, "vetted": True},
    }
    fields.update(changes)
    return Snippet.model_validate(fields)


def test_metadata_is_flat_with_tests_as_json_and_round_trips() -> None:
    snippet = _snippet()
    metadata = snippet.to_metadata()
    assert all(isinstance(value, str | int | float | bool) for value in metadata.values())
    assert json.loads(str(metadata["tests"])) == snippet.tests
    assert metadata["language"] == "python" and metadata["vetted"] is True
    assert metadata["content_sha256"] == snippet.content_sha256
    back = Snippet.from_stored(snippet.index_id, snippet.code, metadata)
    assert back == snippet.model_copy(update={"id": snippet.index_id})
    assert decode_metadata(metadata)["tests"] == snippet.tests


def test_content_id_depends_on_code_name_and_file_only() -> None:
    snippet = _snippet()
    assert snippet.index_id == snippet.content_id == _snippet(docstring="changed").content_id
    assert _snippet(code=ADD + "# v2\n").content_id != snippet.content_id
    assert _snippet(file="/src/other.py").content_id != snippet.content_id
    assert _snippet(qualified_name="Calc.add").content_id != snippet.content_id
    # ...while the content hash notices every stored field
    assert _snippet(docstring="changed").content_sha256 != snippet.content_sha256
    assert _snippet(id="pool-7").index_id == "pool-7"


def test_bad_tests_are_a_spec_error_naming_the_snippet() -> None:
    with pytest.raises(SpecError, match=r"^/src/math\.py: add: test 1 does not parse"):
        _snippet(tests=["assert add(1, 2) =="])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"extra": {"tests": "x"}}, "reserved keys"),
        ({"extra": {"nested": {"a": 1}}}, "extra.nested"),
        ({"code": "   \n"}, "code is empty"),
        ({"colour": "red"}, "Extra inputs are not permitted"),
    ],
)
def test_invalid_snippets_are_rejected(changes: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _snippet(**changes)


def test_foreign_metadata_decodes_tolerantly() -> None:
    assert decode_metadata({"tests": "not json", "n": 1}) == {"tests": "not json", "n": 1}
    assert decode_metadata(None) == {}
    snippet = Snippet.from_stored("x1", "def f(): pass", {"source": "web", "tests": "[]"})
    assert (snippet.id, snippet.tests, snippet.extra) == ("x1", [], {"source": "web"})


def test_public_api_is_pinned() -> None:
    assert sorted(guardrail.index.__all__) == [
        "AddReport",
        "ChromaUnavailableError",
        "CodeIndex",
        "CodeIndexError",
        "CollectionNameError",
        "DoctestTests",
        "EmbeddingModelError",
        "IndexNotFoundError",
        "ProgressHook",
        "SentenceTransformerEmbedding",
        "SkipReport",
        "SkippedFile",
        "Snippet",
        "SourceFileError",
        "StoredCheck",
        "TEST_GLOBS",
        "TreeSplit",
        "chroma_default_embedding",
        "decode_metadata",
        "default_index_path",
        "doctest_tests",
        "load_embedding",
        "minilm_embedding",
        "sentence_transformer_embedding",
        "split_python_file",
        "split_python_source",
        "split_tree",
        "stored_summary",
        "verify_stored",
    ]
