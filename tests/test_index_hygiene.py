"""Index hygiene: --exclude and the test default, listing snippets, readers that create nothing.

Real Chroma (local directories, an ephemeral client, a `chroma run` server) and the real MiniLM.
"""

from __future__ import annotations

import shutil
import uuid
from pathlib import Path

import chromadb
import pytest
from chromadb.config import Settings
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.errors import InputError
from guardrail.index import (
    CodeIndex,
    IndexNotFoundError,
    SentenceTransformerEmbedding,
    split_tree,
)

CODEBASE = Path(__file__).parent / "snippets" / "codebase"
runner = CliRunner()


pytestmark = pytest.mark.usefixtures("isolated_cli")


def _messy_codebase(tmp_path: Path) -> Path:
    """pocketlib plus tests, fixtures and generated code that an index should not serve."""
    root = tmp_path / "messy"
    shutil.copytree(CODEBASE, root)
    package = root / "pocketlib"
    (root / "tests").mkdir()
    (root / "tests" / "helpers.py").write_text("def make_fixture_rect():\n    return 1\n")
    (package / "test_arith.py").write_text("def test_gcd():\n    assert True\n")
    (package / "arith_test.py").write_text("def test_lcm():\n    assert True\n")
    (root / "conftest.py").write_text("def pytest_configure(config):\n    pass\n")
    (package / "test").mkdir()
    (package / "test" / "util.py").write_text("def check_util():\n    pass\n")
    (package / "testing").mkdir()
    (package / "testing" / "asserts.py").write_text("def assert_close(a, b):\n    pass\n")
    (package / "fixtures" / "deep").mkdir(parents=True)
    (package / "fixtures" / "deep" / "data.py").write_text("def fixture_data():\n    pass\n")
    (package / "messages_pb2.py").write_text("def generated_message():\n    pass\n")
    return root


def _names(tree_files: dict[str, list[object]]) -> set[str]:
    return {Path(file).name for file in tree_files}


def test_tests_are_left_out_by_default_and_testing_helpers_are_kept(tmp_path: Path) -> None:
    root = _messy_codebase(tmp_path)
    tree = split_tree(root)
    names = _names(tree.files)  # type: ignore[arg-type]
    assert not names & {"helpers.py", "test_arith.py", "arith_test.py", "conftest.py", "util.py"}
    assert {"asserts.py", "data.py", "messages_pb2.py", "arith.py"} <= names
    assert tree.excluded == 5

    everything = split_tree(root, include_tests=True)
    assert {"helpers.py", "test_arith.py", "arith_test.py", "conftest.py", "util.py"} <= _names(
        everything.files  # type: ignore[arg-type]
    )
    assert everything.excluded == 0


def test_exclude_globs_follow_gitignore_rules(tmp_path: Path) -> None:
    root = _messy_codebase(tmp_path)
    tree = split_tree(root, exclude=["**/fixtures/**", "*_pb2.py", "pocketlib/t*.py"])
    names = _names(tree.files)  # type: ignore[arg-type]
    # "**/fixtures/**" spans folders, "*_pb2.py" matches at any depth, an anchored glob's "*"
    # stays in its folder (pocketlib/text.py goes, pocketlib/testing/asserts.py stays).
    assert not names & {"data.py", "messages_pb2.py", "text.py"}
    assert {"asserts.py", "arith.py", "shapes.py"} <= names
    assert tree.excluded == 5 + 3
    folder = split_tree(root, exclude=["fixtures/"], include_tests=True)
    assert "data.py" not in _names(folder.files)  # type: ignore[arg-type]
    assert folder.excluded == 1


def test_a_file_named_as_path_is_split_whatever_its_name(tmp_path: Path) -> None:
    root = _messy_codebase(tmp_path)
    tree = split_tree(root / "pocketlib" / "test_arith.py", exclude=["*.py"])
    assert [s.qualified_name for s in tree.snippets] == ["test_gcd"]


@pytest.mark.parametrize("glob", ["", "/", "[abc.py"])
def test_a_malformed_glob_is_bad_input(tmp_path: Path, glob: str) -> None:
    with pytest.raises(InputError, match="--exclude glob"):
        split_tree(tmp_path, exclude=[glob])
    result = runner.invoke(app, ["index", str(tmp_path), "--exclude", glob])
    assert result.exit_code == 2
    assert "--exclude glob" in result.stderr
    assert not (tmp_path / "index").exists()


@pytest.mark.parametrize("name", ["mi", "-starts-with-a-dash", "has space", "x" * 513, "ends."])
def test_a_collection_name_chroma_refuses_is_bad_input_and_creates_nothing(
    tmp_path: Path, name: str
) -> None:
    """Before: Chroma's refusal came back as 'cannot open collection' with a hint about
    embeddings, after the index directory had been created."""
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "m.py").write_text("def f():\n    return 1\n")
    for command in (["index", str(tmp_path / "code")], ["search", "anything"]):
        result = runner.invoke(app, [*command, "--collection", name])
        assert result.exit_code == 2, result.output
        assert "is not one Chroma accepts" in result.stderr
        assert "3-512 characters" in result.stderr
    assert not (tmp_path / "index").exists()


def test_cli_index_exclude_and_include_tests_change_what_is_stored(tmp_path: Path) -> None:
    root = _messy_codebase(tmp_path)
    first = runner.invoke(app, ["index", str(root), "--exclude", "**/fixtures/**"])
    assert first.exit_code == 0, first.output
    assert "6 excluded" in first.stdout
    index = CodeIndex("guardrail", path=tmp_path / "index")
    stored = {s.qualified_name for s in index.snippets()}
    assert "fixture_data" not in stored
    assert "test_gcd" not in stored
    assert {"assert_close", "generated_message", "gcd"} <= stored

    again = runner.invoke(app, ["index", str(root), "--include-tests"])
    assert again.exit_code == 0, again.output
    stored = {s.qualified_name for s in index.snippets()}
    assert {"fixture_data", "test_gcd", "test_lcm", "pytest_configure", "check_util"} <= stored

    # Excluding again removes what the exclusion now covers: the index holds PATH minus it.
    third = runner.invoke(app, ["index", str(root), "--exclude", "*_pb2.py"])
    assert third.exit_code == 0, third.output
    stored = {s.qualified_name for s in index.snippets()}
    assert "generated_message" not in stored
    assert "test_gcd" not in stored
    assert "fixture_data" in stored


def test_index_help_documents_exclude_and_the_test_default() -> None:
    result = runner.invoke(app, ["index", "--help"], terminal_width=200)
    assert result.exit_code == 0
    flat = " ".join(result.stdout.split())
    assert "--exclude" in flat
    assert "'**/fixtures/**'" in flat
    assert "--include-tests" in flat
    assert "test_*.py" in flat


# -- listing snippets ------------------------------------------------------------------------


def test_snippets_iterates_everything_in_file_and_line_order_across_pages(
    tmp_path: Path, minilm: SentenceTransformerEmbedding
) -> None:
    tree = split_tree(CODEBASE)
    index = CodeIndex("listing", path=tmp_path / "listing", embedding_function=minilm)
    # Written in reverse file order, so the insertion order is not the order asked for.
    index.replace_files(dict(reversed(list(tree.files.items()))))

    listed = list(index.snippets(page_size=4))

    expected = sorted(tree.snippets, key=lambda s: (s.file, s.start_line, s.qualified_name))
    assert [s.index_id for s in listed] == [s.index_id for s in expected]
    assert listed == [s.model_copy(update={"id": s.index_id}) for s in expected]
    assert len(index) == index.count() == len(expected) == 25
    assert [s.index_id for s in index.snippets(page_size=1000)] == [s.index_id for s in listed]


def test_snippets_with_where_pages_through_only_the_matches(
    tmp_path: Path, minilm: SentenceTransformerEmbedding
) -> None:
    tree = split_tree(CODEBASE)
    index = CodeIndex("listing-where", path=tmp_path / "listing", embedding_function=minilm)
    index.replace_files(tree.files)
    shapes = next(file for file in tree.files if file.endswith("shapes.py"))

    listed = list(index.snippets(where={"module": "pocketlib.shapes"}, page_size=2))

    assert [s.qualified_name for s in listed] == [s.qualified_name for s in tree.files[shapes]]
    assert list(index.snippets(where={"file": "/nowhere.py"})) == []
    with pytest.raises(ValueError, match="page_size"):
        list(index.snippets(page_size=0))


# -- readers create nothing --------------------------------------------------------------------


def _tree(directory: Path) -> dict[str, int]:
    """Every file and folder under ``directory`` with its size (folders: -1)."""
    return {
        str(path.relative_to(directory)): path.stat().st_size if path.is_file() else -1
        for path in sorted(directory.rglob("*"))
    }


def test_search_on_a_missing_index_directory_fails_and_creates_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-index"
    result = runner.invoke(app, ["search", "gcd", "--path", str(missing)])
    assert result.exit_code == 2, result.output
    assert f"no index at {missing}" in result.stderr
    assert "guardrail index PATH" in result.stderr
    assert not missing.exists()
    # The default location ($GUARDRAIL_INDEX_DIR) too.
    default = runner.invoke(app, ["search", "gcd"])
    assert default.exit_code == 2, default.output
    assert not (tmp_path / "index").exists()

    empty_dir = tmp_path / "empty"
    empty_dir.mkdir()
    with pytest.raises(IndexNotFoundError, match="holds no Chroma index"):
        CodeIndex("guardrail", path=empty_dir, create=False)
    assert list(empty_dir.iterdir()) == []


def test_search_on_a_missing_collection_fails_and_creates_nothing(
    tmp_path: Path, minilm: SentenceTransformerEmbedding
) -> None:
    directory = tmp_path / "index"
    CodeIndex("present", path=directory, embedding_function=minilm).replace_files(
        split_tree(CODEBASE).files
    )
    before = _tree(directory)

    result = runner.invoke(app, ["search", "gcd", "--collection", "absent"])
    with pytest.raises(IndexNotFoundError, match="no collection 'absent'"):
        CodeIndex("absent", path=directory, create=False, embedding_function=minilm)

    assert result.exit_code == 2, result.output
    assert "no collection 'absent'" in result.stderr
    assert "guardrail index PATH" in result.stderr
    client = chromadb.PersistentClient(
        path=str(directory), settings=Settings(anonymized_telemetry=False)
    )
    assert [c.name for c in client.list_collections()] == ["present"]
    assert _tree(directory) == before
    # The reader still opens what exists.
    opened = CodeIndex("present", path=directory, create=False, embedding_function=minilm)
    assert opened.count() == 25


def test_a_missing_collection_on_a_server_or_in_memory_is_not_created(
    chroma_server_url: str, minilm: SentenceTransformerEmbedding
) -> None:
    name = f"absent-{uuid.uuid4().hex[:8]}"
    with pytest.raises(IndexNotFoundError, match=name):
        CodeIndex(name, url=chroma_server_url, create=False, embedding_function=minilm)
    host, port = chroma_server_url.removeprefix("http://").split(":")
    client = chromadb.HttpClient(
        host=host, port=int(port), settings=Settings(anonymized_telemetry=False)
    )
    assert name not in {c.name for c in client.list_collections()}
    with pytest.raises(IndexNotFoundError, match=name):
        CodeIndex(name, ephemeral=True, create=False, embedding_function=minilm)
    result = runner.invoke(
        app, ["search", "gcd", "--chroma-url", chroma_server_url, "--collection", name]
    )
    assert result.exit_code == 2, result.output


def test_search_retrieves_the_measured_default_fetch_k() -> None:
    """20: the smallest k with recall >= 95% in bench/bench_fetch_k.py (0.942 at 10)."""
    import inspect

    from guardrail.cli.search import search

    assert inspect.signature(search).parameters["fetch_k"].default == 20
