"""Context trees: content-addressed in the pool, materialized as real folders, hostile data."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from guardrail.roots import trusted_root
from guardrail_eval.contexttrees import TreeError, TreeStore, materialize, tree_files


def test_a_fork_costs_one_object_and_is_materialized_as_a_real_tree(tmp_path: Path) -> None:
    store = TreeStore(tmp_path / "context")
    base = {"pkg/__init__.py": b"", "pkg/mod.py": b"def f():\n    return 1\n"}
    codebase = store.add(base)
    fork = store.add({**base, "pkg/mod.py": b"def f():\n    return 2\n"})
    assert codebase != fork and store.add(dict(reversed(base.items()))) == codebase
    assert len(list((tmp_path / "context" / "objects").iterdir())) == 3
    root = materialize(tmp_path / "context", fork, tmp_path / "cache")
    assert (root / "pkg" / "mod.py").read_bytes() == b"def f():\n    return 2\n"
    assert trusted_root(root / "pkg" / "mod.py") is not None
    assert materialize(tmp_path / "context", fork, tmp_path / "cache") == root  # made once
    assert (
        tree_files(tmp_path / "context", codebase)["pkg/mod.py"]
        == hashlib.sha256(base["pkg/mod.py"]).hexdigest()
    )


def test_a_tampered_object_or_a_climbing_path_is_refused(tmp_path: Path) -> None:
    context = tmp_path / "context"
    store = TreeStore(context)
    tree = store.add({"pkg/mod.py": b"x = 1\n"})
    (digest,) = tree_files(context, tree).values()
    (context / "objects" / digest).write_bytes(b"import os\n")
    with pytest.raises(TreeError, match="do not hash to its name"):
        materialize(context, tree, tmp_path / "cache")
    with pytest.raises(TreeError, match="no plain relative path"):
        store.add({"../evil.py": b""})
    raw = (json.dumps({"files": {"../../evil.py": digest}}, sort_keys=True) + "\n").encode()
    climbing = hashlib.sha256(raw).hexdigest()
    (context / "trees" / f"{climbing}.json").write_bytes(raw)
    with pytest.raises(TreeError, match="malformed"):
        materialize(context, climbing, tmp_path / "cache")
    assert not (tmp_path / "evil.py").exists()
