"""Embedding functions: the offline MiniLM, any sentence-transformers model, Chroma's default."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from guardrail.index import (
    EmbeddingModelError,
    SentenceTransformerEmbedding,
    load_embedding,
    minilm_embedding,
    sentence_transformer_embedding,
)


def test_minilm_embeds_offline_into_384_unit_vectors(minilm: SentenceTransformerEmbedding) -> None:
    vectors = minilm(["def add(a, b): return a + b", "check whether a year is a leap year"])
    assert len(vectors) == 2
    assert all(v.shape == (384,) and v.dtype == np.float32 for v in vectors)
    assert np.allclose([np.linalg.norm(v) for v in vectors], 1.0, atol=1e-3)
    assert minilm.batch_size >= 128


def test_the_model_is_loaded_once_per_process(minilm: SentenceTransformerEmbedding) -> None:
    again = minilm_embedding()
    assert again is not minilm
    assert again.load() is minilm.load()


def test_config_matches_chromas_sentence_transformer_schema(
    minilm: SentenceTransformerEmbedding,
) -> None:
    config = minilm.get_config()
    SentenceTransformerEmbedding.validate_config(config)  # Chroma's own JSON schema
    assert SentenceTransformerEmbedding.name() == "sentence_transformer"
    assert Path(config["model_name"]).is_dir()
    rebuilt = SentenceTransformerEmbedding.build_from_config(config)
    assert rebuilt.get_config() == config
    assert rebuilt.load() is minilm.load()
    assert minilm.default_space() == "cosine"


def test_load_embedding_maps_names(minilm: SentenceTransformerEmbedding) -> None:
    loaded = load_embedding("minilm")
    assert isinstance(loaded, SentenceTransformerEmbedding)
    assert loaded.get_config() == minilm.get_config()
    local = load_embedding(str(Path(minilm.model_name)))
    assert isinstance(local, SentenceTransformerEmbedding)
    assert local.model_name == minilm.model_name


def test_a_missing_local_model_is_an_embedding_model_error(tmp_path: Path) -> None:
    function = sentence_transformer_embedding(tmp_path / "no-such-model")
    with pytest.raises(EmbeddingModelError, match="no-such-model") as raised:
        function(["text"])
    assert "--embedding minilm" in raised.value.hint


def test_a_hub_model_offline_fails_fast_with_a_clear_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    function = load_embedding("sentence-transformers/not-cached-here-v9")
    assert isinstance(function, SentenceTransformerEmbedding)
    started = time.monotonic()
    with pytest.raises(EmbeddingModelError, match=r"HF_HUB_OFFLINE is set"):
        function.load()
    assert time.monotonic() - started < 10


def test_chroma_default_that_cannot_be_downloaded_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # Chroma downloads its default model on first use. Point it at an empty cache and a port
    # that refuses connections, so the test means the same thing on machines with network.
    from chromadb.utils.embedding_functions.onnx_mini_lm_l6_v2 import ONNXMiniLM_L6_V2

    monkeypatch.setattr(ONNXMiniLM_L6_V2, "DOWNLOAD_PATH", tmp_path / "onnx")
    monkeypatch.setattr(ONNXMiniLM_L6_V2, "MODEL_DOWNLOAD_URL", "http://127.0.0.1:9/onnx.tgz")
    with pytest.raises(EmbeddingModelError, match="Chroma's default embedding") as raised:
        load_embedding("chroma-default")
    assert "--embedding minilm" in raised.value.hint


def test_importing_guardrail_stays_light() -> None:
    probe = (
        "import sys, guardrail, guardrail.gate, guardrail.cli.app;"
        "heavy = {'chromadb', 'torch', 'sentence_transformers'} & set(sys.modules);"
        "assert not heavy, heavy;"
        "import guardrail.index;"
        "heavy = {'torch', 'sentence_transformers'} & set(sys.modules);"
        "assert not heavy, heavy"
    )
    subprocess.run([sys.executable, "-c", probe], check=True)
