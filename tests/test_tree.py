"""The indexed tree is untrusted: nothing outside its root is read, and no one file stops a run.

`guardrail.tree` on its own (links out and in, a link swapped in between check and open, FIFOs,
sockets, ``/dev/zero``, ``..``, size and depth caps, a linked root), then ``guardrail index`` on
the planted `hostile_tree` (conftest.py) through Typer's CliRunner, with real Chroma and MiniLM.
"""

from __future__ import annotations

import json
import os
import signal
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.index import CodeIndex, split_python_file, split_tree
from guardrail.index.errors import SourceFileError
from guardrail.tree import (
    DirChoice,
    EntryKind,
    TreeFileError,
    TreeSkip,
    entry_kind,
    read_in_tree,
    tree_root,
    walk_tree,
)

runner = CliRunner()

PLANTED_SKIPS = {
    "treepkg/secret.py": "symlink",
    "treepkg/linked": "symlink",
    "treepkg/inlink.py": "symlink",
    "treepkg/zero.py": "symlink",
    "treepkg/loop.py": "symlink",
    "treepkg/fifo.py": "not_regular",
    "treepkg/sock.py": "not_regular",
    "treepkg/bomb.py": "too_complex",
    "treepkg/huge.py": "too_large",
}
"""Every planted file `split_tree` must skip, by its kind (plus the 1,100-level folder)."""
INDEXED = {
    "__init__.py",
    "good.py",
    "inside.py",
    "leaks.py",
    "uses_bomb.py",
    "surrogate.py",
    "many.py",
}


@contextmanager
def deadline(seconds: int) -> Iterator[None]:
    """Fail instead of hanging for ever (a FIFO opened for reading blocks until a writer comes)."""

    def expired(*_: object) -> None:
        raise AssertionError(f"still running after {seconds} s: something blocked")

    previous = signal.signal(signal.SIGALRM, expired)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _refusal(root: Path, relative: str) -> TreeSkip:
    with pytest.raises(TreeFileError) as caught:
        read_in_tree(root, relative)
    return caught.value.skip


# -- the primitive -----------------------------------------------------------------------------


def test_links_out_of_the_tree_are_never_followed(hostile_tree: Path) -> None:
    assert _refusal(hostile_tree, "treepkg/secret.py") is TreeSkip.SYMLINK
    assert _refusal(hostile_tree, "treepkg/linked/mod.py") is TreeSkip.SYMLINK  # a linked folder
    assert _refusal(hostile_tree, "treepkg/zero.py") is TreeSkip.SYMLINK
    assert _refusal(hostile_tree, "treepkg/loop.py") is TreeSkip.SYMLINK
    assert _refusal(hostile_tree, "../host/secret.py") is TreeSkip.OUTSIDE_ROOT
    assert _refusal(hostile_tree, "treepkg/../../host/secret.py") is TreeSkip.OUTSIDE_ROOT
    assert _refusal(hostile_tree, str(hostile_tree.parent / "host" / "secret.py")) is (
        TreeSkip.OUTSIDE_ROOT
    )
    assert entry_kind(hostile_tree, "treepkg/linked") is EntryKind.SYMLINK
    assert entry_kind(hostile_tree, "treepkg/linked/mod.py") is None


def test_links_inside_the_tree_are_refused_too(hostile_tree: Path) -> None:
    assert _refusal(hostile_tree, "treepkg/inlink.py") is TreeSkip.SYMLINK
    assert read_in_tree(hostile_tree, "treepkg/inside.py").startswith(b"def triple")


def test_fifos_and_sockets_are_refused_without_blocking(hostile_tree: Path) -> None:
    with deadline(20):
        assert _refusal(hostile_tree, "treepkg/fifo.py") is TreeSkip.NOT_REGULAR
        assert _refusal(hostile_tree, "treepkg/sock.py") is TreeSkip.NOT_REGULAR
    assert entry_kind(hostile_tree, "treepkg/fifo.py") is EntryKind.OTHER


def test_files_over_the_limit_are_refused_before_they_are_read(tmp_path: Path) -> None:
    (tmp_path / "big.py").write_bytes(b"x" * 101)
    with pytest.raises(TreeFileError) as caught:
        read_in_tree(tmp_path, "big.py", max_bytes=100)
    assert caught.value.skip is TreeSkip.TOO_LARGE
    assert read_in_tree(tmp_path, "big.py", max_bytes=101) == b"x" * 101


def test_a_link_swapped_in_after_the_check_is_not_followed(
    hostile_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The ``lstat`` lies (the link was a regular file when checked): the open still refuses it."""
    was = {
        "secret.py": os.stat(hostile_tree / "treepkg" / "good.py"),  # a regular file
        "linked": os.stat(hostile_tree / "treepkg"),  # a folder
    }
    real_stat = os.stat

    def stale(path: Any, *args: Any, **kwargs: Any) -> os.stat_result:
        return was[path] if path in was else real_stat(path, *args, **kwargs)

    monkeypatch.setattr("guardrail.tree.os.stat", stale)
    assert _refusal(hostile_tree, "treepkg/secret.py") in {TreeSkip.SYMLINK, TreeSkip.NOT_REGULAR}
    assert _refusal(hostile_tree, "treepkg/linked/mod.py") in {TreeSkip.SYMLINK, TreeSkip.MISSING}


def test_a_linked_root_is_resolved_once(hostile_tree: Path, tmp_path: Path) -> None:
    link = tmp_path / "root-link"
    link.symlink_to(hostile_tree, target_is_directory=True)
    assert tree_root(link) == hostile_tree.resolve()
    assert read_in_tree(link, "treepkg/good.py").startswith(b"def double")
    with pytest.raises(TreeFileError):
        tree_root(hostile_tree / "treepkg" / "fifo.py")


def test_the_walk_reports_links_odd_files_and_folders_too_deep(hostile_tree: Path) -> None:
    with deadline(60):
        entries = list(walk_tree(hostile_tree, suffix=".py", choose=lambda _: DirChoice.ENTER))
    skips = {e.relative: e.skip.skip for e in entries if e.skip is not None}
    assert skips["treepkg/secret.py"] is TreeSkip.SYMLINK
    assert skips["treepkg/linked"] is TreeSkip.SYMLINK
    assert skips["treepkg/fifo.py"] is TreeSkip.NOT_REGULAR
    assert skips["treepkg/sock.py"] is TreeSkip.NOT_REGULAR
    (deep,) = [name for name, skip in skips.items() if skip is TreeSkip.TOO_DEEP]
    assert deep.count("d/") == 64
    readable = {e.relative for e in entries if e.skip is None}
    assert {f"treepkg/{name}" for name in INDEXED} <= readable
    assert not any("mod.py" in name for name in readable)


# -- guardrail index on the hostile tree -------------------------------------------------------


def test_split_tree_indexes_the_good_files_and_counts_every_skip(
    hostile_tree: Path, host_file_text: str
) -> None:
    with deadline(120):
        tree = split_tree(hostile_tree)
    assert {Path(file).name for file in tree.files} == INDEXED
    kinds = {
        str(Path(s.file).relative_to(hostile_tree.resolve())): s.kind for s in tree.skipped.files
    }
    assert {name: kind for name, kind in kinds.items() if kind != "too_deep"} == PLANTED_SKIPS
    assert list(kinds.values()).count("too_deep") == 1
    assert tree.skipped.by_kind()["symlink"] == 5
    (many,) = tree.skipped.functions
    assert "12,000" not in many.reason
    assert "more than 1,000 examples" in many.reason
    # Every snippet records the tree as its root; none holds the host's text or a lone surrogate.
    for snippet in tree.snippets:
        assert snippet.root == str(hostile_tree.resolve())
        assert ".." not in Path(snippet.file).parts
        text = json.dumps(snippet.model_dump(), ensure_ascii=False)
        assert host_file_text not in text
        text.encode("utf-8")  # a lone surrogate would raise here
    by_name = {s.qualified_name: s for s in tree.snippets}
    assert by_name["size"].tests == []  # 12,000 examples: kept, without tests
    assert by_name["double"].tests
    assert "\\udc80" in by_name["echo"].docstring
    assert by_name["echo"].tests  # kept as escaped text (a raw surrogate does not compile)


def test_a_link_given_as_the_file_is_refused(hostile_tree: Path, host_file_text: str) -> None:
    with pytest.raises(SourceFileError) as caught:
        split_python_file(hostile_tree / "treepkg" / "secret.py")
    assert caught.value.kind == "symlink"
    result = runner.invoke(app, ["index", str(hostile_tree / "treepkg" / "secret.py")])
    assert result.exit_code == 2
    assert host_file_text not in result.output


@pytest.mark.usefixtures("isolated_cli")
def test_guardrail_index_survives_every_planted_file_and_lists_the_skips(
    hostile_tree: Path, host_file_text: str
) -> None:
    with deadline(300):
        shown = runner.invoke(app, ["index", str(hostile_tree)])
        as_json = runner.invoke(app, ["index", "--json", str(hostile_tree)])
    assert shown.exit_code == 0, shown.output
    assert f"files     {len(INDEXED)} read, {len(PLANTED_SKIPS) + 1} skipped" in shown.stdout
    assert "5 symlink, 2 not_regular" in shown.stdout
    for name in PLANTED_SKIPS:
        assert f"{name}: " in shown.stdout
    assert "nested more than 64 folders below the root" in shown.stdout
    assert "the examples of size left out" in shown.stdout

    assert as_json.exit_code == 0, as_json.output
    payload = json.loads(as_json.stdout)
    assert payload["files"] == {"read": len(INDEXED), "skipped": 10, "excluded": 0}
    skipped = payload["skipped"]
    assert skipped["by_kind"] == {
        "symlink": 5,
        "not_regular": 2,
        "too_complex": 1,
        "too_large": 1,
        "too_deep": 1,
    }
    reasons = {Path(item["file"]).name: item["reason"] for item in skipped["files"]}
    assert reasons["fifo.py"].startswith("not a regular file")
    assert reasons["bomb.py"].startswith("too deeply nested")
    assert [item["kind"] for item in skipped["functions"]] == ["function"]

    stored = list(CodeIndex("guardrail", create=False).snippets())
    assert {s.qualified_name for s in stored} >= {"double", "triple", "leak", "halve", "echo"}
    assert {s.root for s in stored} == {str(hostile_tree.resolve())}
    assert not any(host_file_text in s.code + s.docstring for s in stored)
    for output in (shown.output, as_json.output):
        assert host_file_text not in output
        assert not any("\ud800" <= char <= "\udfff" for char in output)


def test_docstrings_are_copied_only_from_inside_the_indexed_folder(
    tmp_path: Path, host_file_text: str
) -> None:
    """Indexing a package folder puts its sys.path root above it: nothing there is read."""
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil" / "__init__.py").write_text("")
    (tmp_path / "evil" / "mod.py").write_text(
        "import neighbour\n\n\ndef f():\n    return 1\n\n\nf.__doc__ = neighbour.g.__doc__\n"
    )
    (tmp_path / "neighbour.py").write_text(f'def g():\n    """{host_file_text}"""\n')

    (alone,) = split_tree(tmp_path / "evil").snippets
    (whole,) = [s for s in split_tree(tmp_path).snippets if s.qualified_name == "f"]

    assert alone.root == str(tmp_path.resolve())  # the package's sys.path folder, as before
    assert alone.docstring == ""
    assert whole.docstring == host_file_text  # the neighbour is in the tree indexed this time
