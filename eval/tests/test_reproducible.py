"""Reproducible real-code pools: the same inputs give the same bytes, in separate processes.

Each build runs ``guardrail eval build-pool --from TREE`` in a process of its own, with its own
``PYTHONHASHSEED`` (set and dict-of-set order differ between them), no verdict cache (every
verdict judged again by the real engine) and its own cache folder (its own materialized trees):
anything that depends on hash order, completion order, timings or paths shows as a differing
byte. The manifest names the inputs, so a rebuild with another seed says which input differs.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from guardrail_eval.manifest import differences, read_manifest

REPO = Path(__file__).resolve().parents[2]

MODULE = '''\
"""Doctested functions over a helper, with a near-clone and a class."""


def _step(value, by):
    return value + by


def clamp(value, low, high):
    """Clamp *value* into the closed range [low, high].

    >>> clamp(5, 0, 10)
    5
    >>> clamp(-3, 0, 10)
    0
    >>> clamp(42, 0, 10)
    10
    """
    if value < low:
        return low
    if value > high:
        return high
    return value


def shifted(values, by=1):
    """Each non-negative value plus *by*.

    >>> shifted([0, 1])
    [1, 2]
    >>> shifted([5], by=0)
    [5]
    >>> shifted([-1, 2])
    [3]
    """
    return [_step(v, by) for v in values if v >= 0]


class Window:
    def __init__(self, size):
        self.size = size

    def over(self, values):
        """The sums of every *size* consecutive values.

        >>> Window(2).over([1, 2, 3])
        [3, 5]
        >>> Window(3).over([1, 2, 3, 4])
        [6, 9]
        >>> Window(1).over([4])
        [4]
        """
        return [sum(values[i : i + self.size]) for i in range(len(values) - self.size + 1)]
'''


def _build(tree: Path, out: Path, cache: Path, hash_seed: str, seed: int = 0) -> str:
    env = {
        **os.environ,
        "PYTHONHASHSEED": hash_seed,
        "GUARDRAIL_CACHE_DIR": str(cache),
        "PYTHONPATH": os.pathsep.join([str(REPO), str(REPO / "eval")]),
    }
    command = [sys.executable, "-c", "from guardrail.cli.app import main; main()", "eval"]
    command += ["build-pool", "--from", str(tree), "--out", str(out), "--seed", str(seed)]
    done = subprocess.run(
        [*command, "--no-cache"], env=env, capture_output=True, text=True, timeout=900, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def _files(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != "build_report.json"
    }


@pytest.mark.docker
def test_two_processes_build_byte_identical_pools_and_a_rebuild_says_so(
    docker_sandbox: object, tmp_path: Path
) -> None:
    tree = tmp_path / "src"
    (tree / "winpkg").mkdir(parents=True)
    (tree / "winpkg" / "__init__.py").write_text('"""A package written by the test."""\n')
    (tree / "winpkg" / "ops.py").write_text(MODULE)
    first, second = tmp_path / "one", tmp_path / "two"
    _build(tree, first, tmp_path / "cache-one", hash_seed="1")
    _build(tree, second, tmp_path / "cache-two", hash_seed="2")

    one, two = _files(first), _files(second)
    assert "data/manifest.json" in one and "data/corpus.jsonl" in one
    assert any(name.startswith("context/trees/") for name in one)
    assert sorted(one) == sorted(two)
    assert [name for name in one if one[name] != two[name]] == []

    manifest = read_manifest(first)
    assert manifest is not None
    assert {"seed", "sources", "python", "sandbox_image", "guardrail_version"} <= set(
        manifest.inputs
    )
    assert manifest.outputs["data/corpus.jsonl"]
    assert set(manifest.outputs) >= {"data/queries.jsonl", "context/"}

    # Rebuilt into the same folder: the same bytes, and it says so.
    again = _build(tree, first, tmp_path / "cache-one", hash_seed="3")
    assert "rebuilt byte-identical to the previous build" in " ".join(again.split())
    # With another seed: different bytes, and the input that made them different is named.
    other = _build(tree, first, tmp_path / "cache-one", hash_seed="1", seed=5)
    words = " ".join(other.split())
    assert "differs from the previous build in data/corpus.jsonl" in words
    assert "inputs that differ: seed: 0 -> 5" in words
    report = json.loads((first / "data" / "build_report.json").read_text())
    assert report["seed"] == 5 and report["clean"] is True


def test_differences_name_the_inputs_and_outputs_that_differ() -> None:
    from guardrail_eval.manifest import PoolManifest

    old = PoolManifest(inputs={"seed": "0", "python": "CPython 3.12.1"}, outputs={"a": "1"})
    new = PoolManifest(inputs={"seed": "0", "python": "CPython 3.12.3"}, outputs={"a": "2"})
    assert differences(old, new) == (["python: CPython 3.12.1 -> CPython 3.12.3"], ["a"])
    assert differences(old, old) == ([], [])


def test_a_rebuild_tells_load_from_a_broken_build() -> None:
    from guardrail_eval.cli import _rebuild_words
    from guardrail_eval.manifest import PoolManifest

    old = PoolManifest(inputs={"seed": "0"}, outputs={"data/corpus.jsonl": "1"})
    same_inputs = PoolManifest(inputs={"seed": "0"}, outputs={"data/corpus.jsonl": "2"})
    assert "the build is not reproducible" in _rebuild_words(old, same_inputs)
    faulted = same_inputs.model_copy(update={"clean": False})
    assert "this build left sandbox faults" in _rebuild_words(old, faulted)
    assert "byte-identical" in _rebuild_words(old, old)
