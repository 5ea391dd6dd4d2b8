"""Queries embedded by numpy (no torch): the in-process model's vectors, or not used at all.

Real parts only: the bundled all-MiniLM-L6-v2 through sentence-transformers as the reference,
real Chroma indexes, and ``guardrail search`` run as its own process (the fast path is what a
fresh process takes; inside this session sentence-transformers is already loaded).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from guardrail.index import CodeIndex, SentenceTransformerEmbedding, minilm_embedding, split_tree
from guardrail.index.numpy_bert import UnsupportedModelError
from guardrail.index.numpy_bert import load as load_numpy_bert

ROOT = Path(__file__).resolve().parent.parent
CODEBASE = ROOT / "tests" / "snippets" / "codebase"
TOLERANCE = 1e-6  # per component; measured differences are below 2e-7 (float32 rounding)
TEXTS = [
    "split an iterable into chunks of n",
    "",
    "x",
    "CamelCase and UPPER case, accents é ü, CJK 中文, emoji 🙂, control \x00\x07 and tabs\t\n",
    "def add(a, b):\n    return a + b\n",
    # Long enough to be truncated at the model's 256 tokens.
    (CODEBASE / "pocketlib" / "text.py").read_text() * 3,
    *[path.read_text()[:1500] for path in sorted((CODEBASE / "pocketlib").glob("*.py"))],
]


@pytest.fixture(scope="module")
def numpy_minilm(minilm: SentenceTransformerEmbedding) -> Any:
    return load_numpy_bert(minilm.model_name)


def test_numpy_vectors_match_sentence_transformers(
    minilm: SentenceTransformerEmbedding, numpy_minilm: Any
) -> None:
    reference = minilm(TEXTS)
    ours = numpy_minilm.encode(TEXTS)
    assert len(ours) == len(TEXTS)
    for text, expected, got in zip(TEXTS, reference, ours, strict=True):
        assert got.dtype == np.float32 and got.shape == (384,)
        assert np.abs(got - expected).max() < TOLERANCE, text[:40]
    # One text at a time (no padding) gives the batched (padded, masked) vectors.
    for text, batched in zip(TEXTS, ours, strict=True):
        assert np.abs(numpy_minilm.encode([text])[0] - batched).max() < TOLERANCE


def test_a_fresh_embedding_embeds_queries_by_numpy_and_documents_by_sentence_transformers(
    minilm: SentenceTransformerEmbedding, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In this session sentence-transformers holds the model, so `query_model` would step aside;
    a model name it has not loaded shows the choice a fresh process makes."""
    fresh = SentenceTransformerEmbedding(minilm.model_name + "/", fast_queries=True)
    assert fresh.get_config()["model_name"] != minilm.model_name  # not the loaded key
    model = fresh.query_model()
    assert model is not None
    query = fresh.embed_query(["binary search in a sorted list"])
    assert np.abs(query[0] - minilm(["binary search in a sorted list"])[0]).max() < TOLERANCE
    assert fresh.get_config()["kwargs"] == {}  # the switch is never persisted
    # Off by argument, by environment, or because sentence-transformers has the model already.
    assert SentenceTransformerEmbedding(fresh.model_name, fast_queries=False).query_model() is None
    monkeypatch.setenv("GUARDRAIL_FAST_EMBEDDING", "0")
    assert SentenceTransformerEmbedding(fresh.model_name).query_model() is None
    monkeypatch.delenv("GUARDRAIL_FAST_EMBEDDING")
    assert SentenceTransformerEmbedding(fresh.model_name).query_model() is model
    assert minilm_embedding(fast_queries=True).query_model() is None


def _altered_model(tmp_path: Path, source: Path, file: str, change: dict[str, Any]) -> Path:
    """A copy of the model directory (weights linked) with one JSON file changed."""
    target = tmp_path / "model"
    shutil.copytree(source, target, ignore=shutil.ignore_patterns("model.safetensors"))
    (target / "model.safetensors").symlink_to(source / "model.safetensors")
    path = target / file
    data = json.loads(path.read_text())
    if isinstance(data, list):
        data = [*data, change]
    else:
        data.update(change)
    path.write_text(json.dumps(data))
    return target


@pytest.mark.parametrize(
    ("file", "change", "named"),
    [
        ("config.json", {"hidden_act": "gelu_new"}, "hidden_act"),
        ("config.json", {"position_embedding_type": "relative_key"}, "position_embedding_type"),
        ("config.json", {"model_type": "roberta"}, "model_type"),
        ("1_Pooling/config.json", {"pooling_mode_cls_token": True}, "mean pooling"),
        ("1_Pooling/config.json", {"pooling_mode_max_tokens": True}, "mean pooling"),
        ("sentence_bert_config.json", {"do_lower_case": True}, "do_lower_case"),
        (
            "modules.json",
            {
                "idx": 3,
                "name": "3",
                "path": "3_Dense",
                "type": "sentence_transformers.models.Dense",
            },
            "modules.json",
        ),
    ],
)
def test_a_model_numpy_does_not_reproduce_is_left_to_sentence_transformers(
    tmp_path: Path,
    minilm: SentenceTransformerEmbedding,
    file: str,
    change: dict[str, Any],
    named: str,
) -> None:
    altered = _altered_model(tmp_path, Path(minilm.model_name), file, change)
    with pytest.raises(UnsupportedModelError, match=named):
        load_numpy_bert(altered)
    assert SentenceTransformerEmbedding(str(altered), fast_queries=True).query_model() is None


def test_missing_files_and_hub_names_are_left_to_sentence_transformers(
    tmp_path: Path, minilm: SentenceTransformerEmbedding
) -> None:
    for missing in ("tokenizer.json", "model.safetensors"):
        target = tmp_path / missing
        shutil.copytree(minilm.model_name, target, ignore=shutil.ignore_patterns(missing))
        with pytest.raises(UnsupportedModelError, match=missing):
            load_numpy_bert(target)
    with pytest.raises(UnsupportedModelError, match="not a local model directory"):
        load_numpy_bert("sentence-transformers/all-MiniLM-L6-v2")


def _guardrail(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``guardrail ARGS`` in a fresh interpreter, listing its imports (``-X importtime``)."""
    environment = {**os.environ, **(env or {})}
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
    )
    command = "from guardrail.cli.app import main; main()"
    return subprocess.run(
        [sys.executable, "-X", "importtime", "-c", command, *args],
        capture_output=True,
        text=True,
        env=environment,
        check=False,
        timeout=600,
    )


def _imported(stderr: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in stderr.splitlines() if "|" in line}


def _results(process: subprocess.CompletedProcess[str]) -> list[tuple[str, float, str]]:
    assert process.returncode == 0, process.stderr[-2000:]
    payload = json.loads(process.stdout)
    return [
        (row["id"], row["score"], row["verdict"]["status"])
        for row in payload["results"] + payload["dropped"]
    ]


def _same(fast: list[tuple[str, float, str]], slow: list[tuple[str, float, str]]) -> None:
    assert [(id_, status) for id_, _, status in fast] == [(id_, status) for id_, _, status in slow]
    assert all(abs(a[1] - b[1]) < TOLERANCE for a, b in zip(fast, slow, strict=True))


def test_reading_an_index_never_loads_sentence_transformers(
    tmp_path: Path, minilm: SentenceTransformerEmbedding
) -> None:
    """Opening a collection used to rebuild Chroma's own embedding function from the persisted
    configuration, which imports sentence-transformers and loads the model (8 s)."""
    index = CodeIndex("fresh", path=tmp_path / "index", embedding_function=minilm)
    index.add(split_tree(CODEBASE).snippets)
    script = (
        "import sys\nfrom guardrail.index import CodeIndex, minilm_embedding\n"
        f"index = CodeIndex('fresh', path={str(tmp_path / 'index')!r}, create=False,"
        " embedding_function=minilm_embedding())\n"
        "print(index.count(), len(list(index.snippets())), index.search('leap year', k=1)[0].id)\n"
        "print(sorted({'torch', 'sentence_transformers', 'transformers'} & set(sys.modules)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        check=True,
        timeout=600,
    )
    counts, heavy = done.stdout.splitlines()
    total = str(index.count())
    assert counts.split()[:2] == [total, total]
    assert counts.split()[2] == index.search("leap year", k=1)[0].id
    assert heavy == "[]"


def test_search_process_without_tests_never_imports_torch_and_finds_the_same(
    tmp_path: Path, minilm: SentenceTransformerEmbedding
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "search.py").write_text(
        (CODEBASE / "pocketlib" / "search.py").read_text().split("def chunked(")[0]
    )
    index = CodeIndex("plain", path=tmp_path / "index", embedding_function=minilm)
    index.add(split_tree(source).snippets)
    where = ["--path", str(tmp_path / "index"), "--collection", "plain", "--json"]
    # No snippet has tests, so no engine is contacted: a dead one must not matter.
    env = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    fast = _guardrail("search", "binary search", *where, env=env)
    slow = _guardrail("search", "binary search", *where, "--no-fast-embedding", env=env)
    by_env = _guardrail(
        "search", "binary search", *where, env={**env, "GUARDRAIL_FAST_EMBEDDING": "0"}
    )
    _same(_results(fast), _results(slow))
    _same(_results(fast), _results(by_env))
    assert not {"torch", "sentence_transformers"} & _imported(fast.stderr)
    assert {"torch", "sentence_transformers"} <= _imported(slow.stderr)
    assert "sentence_transformers" in _imported(by_env.stderr)


@pytest.mark.docker
def test_search_process_ranks_and_judges_the_same_with_either_embedding(
    docker_sandbox: object, tmp_path: Path, minilm: SentenceTransformerEmbedding
) -> None:
    """The whole command (retrieval, stored doctests judged in the sandbox) gives the same rows."""
    index = CodeIndex("codebase", path=tmp_path / "index", embedding_function=minilm)
    index.add(split_tree(CODEBASE).snippets)
    where = ["--path", str(tmp_path / "index"), "--collection", "codebase", "--json"]
    env = {"GUARDRAIL_CACHE_DIR": str(tmp_path / "cache")}
    for query in ("is this number prime", "leap year", "split a list into chunks of size n"):
        fast = _results(_guardrail("search", query, "--fetch-k", "8", *where, env=env))
        slow = _results(
            _guardrail("search", query, "--fetch-k", "8", *where, "--no-fast-embedding", env=env)
        )
        _same(fast, slow)
        assert "verified" in {status for _, _, status in fast}
