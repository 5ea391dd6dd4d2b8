"""The reaper's delete on a real filesystem: trees built to resist deletion go, nothing else does.

The same module runs inside the container (tests/test_hostile.py proves it there, as a job uid,
with permissions the owner took away); here it runs on the host's own filesystem.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrail.sandbox.runner.erase import remove_owned, remove_tree


@pytest.fixture
def back_home() -> Iterator[None]:
    here = os.getcwd()
    yield None
    os.chdir(here)


def _deep(top: Path, depth: int, name: str) -> None:
    """``depth`` levels below ``top``, built relatively: the full path is far beyond PATH_MAX."""
    here = os.getcwd()
    os.chdir(top)
    for _ in range(depth):
        os.mkdir(name)
        os.chdir(name)
    Path("bottom").write_text("x")
    os.chdir(here)


def test_a_tree_deeper_than_recursion_and_path_max_is_deleted(
    tmp_path: Path, back_home: object
) -> None:
    (tmp_path / "deep").mkdir()
    _deep(tmp_path / "deep", 3000, "d" * 200)  # 600,000 characters of path
    os.chdir(tmp_path)
    remove_tree("deep")
    assert os.listdir(tmp_path) == []


def test_every_kind_of_entry_is_deleted_and_links_are_not_followed(
    tmp_path: Path, back_home: object
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("not the job's")
    wide = tmp_path / "box" / "wide"
    wide.mkdir(parents=True)
    for i in range(2000):
        (wide / f"f{i}").touch()
    os.mkfifo(wide / "fifo")
    with socket.socket(socket.AF_UNIX) as server:
        server.bind(str(wide / "sock"))
    (wide / "loop_a").symlink_to("loop_b")
    (wide / "loop_b").symlink_to("loop_a")
    (wide / "out").symlink_to(outside)
    (wide / ("n" * 255)).mkdir()
    (wide / ("n" * 255) / ("m" * 255)).touch()
    for i in range(50):
        (wide / f"sub{i}").mkdir()
        (wide / f"sub{i}" / "x").touch()
        os.chmod(wide / f"sub{i}", 0)
    os.chmod(wide, 0o300)
    remove_owned(str(tmp_path / "box"), os.getuid())
    assert os.listdir(tmp_path / "box") == []
    assert (outside / "keep").read_text() == "not the job's"


def test_only_the_owners_entries_are_deleted(tmp_path: Path, back_home: object) -> None:
    (tmp_path / "mine").touch()
    remove_owned(str(tmp_path), os.getuid() + 1)
    assert os.listdir(tmp_path) == ["mine"]
