"""The runner travels as one deterministic archive and loads from memory, standard library only."""

from __future__ import annotations

import io
import subprocess
import sys
import zipfile
from pathlib import Path

from guardrail.sandbox import runner
from guardrail.sandbox.shipping import (
    BOOTSTRAP,
    INTERPRETER_FLAGS,
    LOADER,
    RUNNER_ARCHIVE,
    RUNNER_VERSION,
    build_archive,
    without_environment,
)

PACKAGE = Path(runner.__file__).parent


def test_the_archive_is_deterministic_and_holds_every_module(tmp_path: Path) -> None:
    assert build_archive(PACKAGE) == RUNNER_ARCHIVE
    names = zipfile.ZipFile(io.BytesIO(RUNNER_ARCHIVE)).namelist()
    assert names == sorted(path.name for path in PACKAGE.glob("*.py"))
    assert len(RUNNER_VERSION) == 16
    copy = tmp_path / "runner"
    copy.mkdir()
    for path in PACKAGE.glob("*.py"):
        (copy / path.name).write_bytes(path.read_bytes())
    assert build_archive(copy) == RUNNER_ARCHIVE  # the timestamps and location do not count
    (copy / "codec.py").write_text((copy / "codec.py").read_text() + "\n# changed\n")
    assert build_archive(copy) != RUNNER_ARCHIVE


def test_every_module_loads_from_memory_with_the_standard_library_only() -> None:
    """The real bootstrap in ``python -I -S`` from ``/``: no guardrail on the path, nothing read
    from disk, and no module loaded that every later process would carry for nothing."""
    start = "g['start'](s)\n"
    assert LOADER.endswith(start)
    script = LOADER.removesuffix(start) + (
        "import importlib, sys\n"
        "sys.meta_path.insert(0, g['MemoryImporter'](s))\n"
        "for n in sorted(s):\n"
        "    if n not in ('__init__.py', 'boot.py'):\n"
        "        importlib.import_module('guardrail_runner.' + n[:-3])\n"
        "print(sorted(sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, *INTERPRETER_FLAGS, "-c", script],
        input=b"%010d" % len(RUNNER_ARCHIVE) + RUNNER_ARCHIVE,
        capture_output=True,
        cwd="/",
        check=False,
    )
    assert result.returncode == 0, result.stderr.decode()
    loaded = result.stdout.decode()
    assert "'guardrail_runner.supervisor'" in loaded
    for absent in ("'guardrail.", "'zipfile'", "'importlib.abc'", "'threading'"):
        assert absent not in loaded


def test_the_bootstrap_leaves_pid_1_no_initial_environment() -> None:
    """/proc/<pid>/environ is the environment the process was started with (gVisor shows PID 1's
    to every uid): the bootstrap replaces the interpreter with one started with none."""
    assert without_environment(LOADER) == BOOTSTRAP
    show = (
        "import os,sys\n"
        "sys.stdout.write(repr((open('/proc/self/environ','rb').read(),os.read(0,5))))"
    )
    result = subprocess.run(
        [sys.executable, "-I", "-c", without_environment(show)],
        input=b"stdin",
        capture_output=True,
        env={"GUARDRAIL_SECRET": "host value", "PATH": "/usr/bin"},
        check=True,
    )
    assert result.stdout == b"(b'', b'stdin')", result
