"""Cache I/O problems on real files and filesystems: a warning and an uncached run, never a lost
verdict. Tests run as root, which ignores file modes, so read-only and full filesystems are real
tmpfs mounts, and unusable paths are made with files where directories belong."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from guardrail.cache import VerdictCache
from guardrail.errors import CacheWarning
from guardrail.gate import Gate
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict

SPEC = Spec.build(["assert f() == 1"], "f")
PASSED = Verdict(status=Status.VERIFIED, reason=Reason.PASSED)
ADD = Spec.from_tests(["assert add(1, 2) == 3", "assert add(-1, 1) == 0"])
GOOD = "def add(a, b):\n    return a + b\n"
BAD = "def add(a, b):\n    return a - b\n"


def _mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"cannot mount a tmpfs (needs root): {done.stderr.strip()}", pytrace=False)


@pytest.fixture
def small_fs(tmp_path: Path) -> Iterator[Path]:
    """A real 64 KiB filesystem, unmounted afterwards."""
    where = tmp_path / "small"
    _mount_tmpfs(where, "64k")
    yield where
    subprocess.run(["umount", "-l", str(where)], check=True)


def _remount(where: Path, mode: str) -> None:
    subprocess.run(["mount", "-o", f"remount,{mode}", str(where)], check=True)


@contextmanager
def _warned() -> Iterator[list[str]]:
    """The messages of every warning raised in the block (filled in when it ends), all ours."""
    messages: list[str] = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield messages
    assert all(issubclass(w.category, CacheWarning) for w in caught), caught
    messages.extend(str(w.message) for w in caught)


def _big(n: int) -> Verdict:
    # Bulk in stdout (stored up to 64,000 characters): the file must outgrow SQLite's page cache,
    # or a read after the damage is served from memory and finds nothing wrong.
    return Verdict(status=Status.FAILED, reason=Reason.TESTS_FAILED, stdout=f"{n}" + "x" * 20000)


def test_a_cache_path_under_a_regular_file_warns_once_and_runs_uncached(tmp_path: Path) -> None:
    (tmp_path / "plain-file").write_text("not a directory")
    with _warned() as record:
        cache = VerdictCache(tmp_path / "plain-file" / "verdicts.sqlite")
        assert not cache.put("code", SPEC, "image", PASSED)
        assert cache.get("code", SPEC, "image") is None
        assert len(cache) == 0
    assert len(record) == 1 and "plain-file" in record[0], record
    assert cache.problem is not None and "uncached" in cache.problem
    cache.close()


def test_a_cache_path_that_is_a_directory_warns_and_runs_uncached(tmp_path: Path) -> None:
    (tmp_path / "verdicts.sqlite").mkdir()
    with _warned() as record:
        cache = VerdictCache(tmp_path / "verdicts.sqlite")
        assert not cache.put("code", SPEC, "image", PASSED)
    assert len(record) == 1 and "cannot open" in record[0], record
    assert (tmp_path / "verdicts.sqlite").is_dir()  # nothing of the user's was touched


def test_a_full_disk_stops_writes_with_one_warning_and_keeps_what_was_stored(
    small_fs: Path,
) -> None:
    cache = VerdictCache(small_fs / "verdicts.sqlite")
    assert cache.put("first", SPEC, "image", PASSED)
    stored = [True]
    with _warned() as record:
        for n in range(40):  # 40 x 8 KB over a 64 KiB filesystem
            stored.append(cache.put(f"code {n}", SPEC, "image", _big(n)))
    assert len(record) == 1 and "full" in record[0], record
    assert stored[-1] is False and not all(stored)
    assert cache.get("first", SPEC, "image") is not None  # reads go on
    cache.close()


def test_a_read_only_filesystem_gives_a_warning_not_a_traceback(small_fs: Path) -> None:
    path = small_fs / "verdicts.sqlite"
    cache = VerdictCache(path)
    assert cache.put("first", SPEC, "image", PASSED)
    cache.close()
    _remount(small_fs, "ro")
    try:
        with _warned() as record:
            cache = VerdictCache(path)
            assert not cache.put("second", SPEC, "image", PASSED)
            cache.get("first", SPEC, "image")  # a hit or a miss, never an exception
            cache.close()
        assert len(record) == 1
    finally:
        _remount(small_fs, "rw")


def _corrupt_by_garbage(path: Path) -> None:
    path.write_bytes(os.urandom(8192))


def _corrupt_by_truncation(path: Path) -> None:
    cache = VerdictCache(path)
    for n in range(300):
        cache.put(f"code {n}", SPEC, "image", _big(n))
    cache.close()
    with path.open("r+b") as handle:
        handle.truncate(path.stat().st_size // 2)


@pytest.mark.parametrize("damage", [_corrupt_by_garbage, _corrupt_by_truncation])
def test_a_corrupt_cache_is_moved_aside_and_a_new_one_started(
    tmp_path: Path, damage: Callable[[Path], None]
) -> None:
    path = tmp_path / "verdicts.sqlite"
    damage(path)
    damaged = path.read_bytes()
    with _warned() as record:
        cache = VerdictCache(path)
    assert len(record) == 1 and "corrupt" in record[0], record
    (moved,) = tmp_path.glob("verdicts.sqlite.corrupt-*")
    assert moved.read_bytes() == damaged
    assert cache.put("code", SPEC, "image", PASSED)
    assert cache.get("code", SPEC, "image") is not None
    cache.close()
    VerdictCache(path).close()  # the next run opens the new file without a word


def test_corruption_found_mid_run_is_moved_aside_and_the_write_still_lands(tmp_path: Path) -> None:
    path = tmp_path / "verdicts.sqlite"
    cache = VerdictCache(path)
    for n in range(300):
        cache.put(f"code {n}", SPEC, "image", _big(n))
    size = path.stat().st_size
    with path.open("r+b") as handle:  # another process scribbles over the open file
        handle.seek(0)
        handle.write(os.urandom(size))
    with _warned() as record:
        assert cache.get("code 7", SPEC, "image") is None
        assert cache.put("new", SPEC, "image", PASSED)
    assert len(record) == 1 and "corrupt" in record[0], record
    assert cache.get("new", SPEC, "image") is not None
    assert list(tmp_path.glob("verdicts.sqlite.corrupt-*"))
    cache.close()


def test_text_with_lone_surrogates_is_stored_escaped_without_a_warning(tmp_path: Path) -> None:
    """Verdicts escape lone surrogates when built, so the write that used to lose a batch lands."""
    cache = VerdictCache(tmp_path / "verdicts.sqlite")
    odd = Verdict(status=Status.FAILED, reason=Reason.TESTS_FAILED, message="lone \udcff")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert cache.put("x = '\udcff'", SPEC, "image", odd)
        stored = cache.get("x = '\udcff'", SPEC, "image")
    assert stored is not None and stored.message == "lone \\udcff"
    cache.close()


@pytest.mark.docker
def test_a_gate_over_a_full_cache_keeps_every_verdict(
    docker_sandbox: object, small_fs: Path
) -> None:
    from guardrail.sandbox.docker import DockerSandbox

    assert isinstance(docker_sandbox, DockerSandbox)
    (small_fs / "filler").write_bytes(b"\0" * (60 << 10))
    with _warned() as record:
        cache = VerdictCache(small_fs / "verdicts.sqlite")
        gate = Gate(docker_sandbox, cache=cache)
        verdicts = gate.verify([GOOD, BAD, GOOD + "\n# again\n"], ADD)
    assert len(record) == 1
    assert [v.status for v in verdicts] == [Status.VERIFIED, Status.FAILED, Status.VERIFIED]
    cache.close()


def test_a_row_that_no_longer_validates_is_a_miss_and_is_replaced(tmp_path: Path) -> None:
    import sqlite3

    path = tmp_path / "verdicts.sqlite"
    cache = VerdictCache(path)
    key = VerdictCache.key("code", SPEC, "image")
    stale = '{"status": "verified", "reason": "a reason this version does not know"}'
    other_version = sqlite3.connect(path, isolation_level=None)
    other_version.execute("INSERT INTO verdicts VALUES (?, ?, ?, ?)", (*key, stale))
    other_version.close()
    with _warned() as record:
        assert cache.get("code", SPEC, "image") is None
    assert len(record) == 1 and "cannot be read" in record[0], record
    assert cache.put("code", SPEC, "image", PASSED)
    assert cache.get("code", SPEC, "image") == PASSED.model_copy(update={"cached": True})
    cache.close()


def test_a_verdict_is_stored_without_an_fsync_and_survives_a_new_process(tmp_path: Path) -> None:
    # WAL with synchronous=NORMAL: no fsync per verdict (it cost 5 ms under the shared lock),
    # and what was committed is read by another process at once.
    cache = VerdictCache(tmp_path / "cache.sqlite")
    assert cache._db is not None
    assert cache._db.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL
    assert cache._db.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    spec = Spec.from_tests(["assert f() == 1"])
    verdict = Verdict.unjudged(Status.UNVERIFIABLE, Reason.MISSING_CONTEXT, "no module")
    assert cache.put("def f():\n    return 1\n", spec, "identity", verdict)
    probe = (
        "from guardrail.cache import VerdictCache; from guardrail.spec import Spec;"
        f" c = VerdictCache({str(tmp_path / 'cache.sqlite')!r});"
        " s = Spec.from_tests(['assert f() == 1']);"
        " v = c.get('def f():\\n    return 1\\n', s, 'identity');"
        " print(v.status.value if v else None)"
    )
    read = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert read.stdout.strip() == "unverifiable"
