"""A sentence-transformers BERT model (such as all-MiniLM-L6-v2) run with numpy alone.

Why: importing sentence-transformers (and torch, transformers, scikit-learn, scipy behind it)
costs 4-9 s per process, against about 0.1 s here to load the tokenizer and map the weights, and
a few milliseconds to embed one query. ``guardrail search`` embeds one text per process, so that
import was nearly all of its time.

The vectors are those of the in-process sentence-transformers model to within float32 rounding
(measured: at most 2e-7 per component over short, long, truncated, empty and non-ASCII texts;
``tests/test_fast_embedding.py`` pins 1e-6), so an index written with one is searched with the
other. That holds only for the model family implemented here, so `load` refuses anything else
with `UnsupportedModelError` (the caller then uses sentence-transformers): a BERT encoder with
absolute positions and exact GELU, a ``Transformer`` module then mean ``Pooling`` and optionally
``Normalize`` and nothing else, weights in ``model.safetensors`` and a ``tokenizer.json``.

What it computes, as ``SentenceTransformer.encode`` does: the tokenizer of ``tokenizer.json``
(``[CLS] ... [SEP]``, truncated to ``max_seq_length``), token + position + segment-0 embeddings,
LayerNorm, then per layer: 12-head self-attention (padding masked), residual and LayerNorm, the
GELU feed-forward, residual and LayerNorm; the mean of the token vectors over the attention
mask; unit length when the model has a ``Normalize`` module or the caller asks for it.
"""

from __future__ import annotations

import json
import math
import struct
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["NumpyBert", "UnsupportedModelError", "load"]

Array = npt.NDArray[np.float32]

_BATCH = 32  # texts per forward pass; sorted by length first, so padding stays small
_MODULES = [
    "sentence_transformers.models.Transformer",
    "sentence_transformers.models.Pooling",
    "sentence_transformers.models.Normalize",
]
# The configuration values this implementation computes; any other value is refused.
_BERT = {
    "model_type": "bert",
    "hidden_act": "gelu",
    "position_embedding_type": "absolute",
}
_MEAN_POOLING = {
    "pooling_mode_cls_token": False,
    "pooling_mode_mean_tokens": True,
    "pooling_mode_max_tokens": False,
    "pooling_mode_mean_sqrt_len_tokens": False,
}
# `math.erf` on each element: exact GELU as torch computes it (a numpy approximation of erf
# drifts by more than float32 rounding). Costs ~1 ms per query token, fine for queries.
_erf = np.frompyfunc(math.erf, 1, 1)
_blas_lock = threading.Lock()


class UnsupportedModelError(Exception):
    """The model directory is not one this module reproduces exactly; says which part differs."""


class NumpyBert:
    """A loaded model; `encode` may be called from several threads (calls run one at a time)."""

    def __init__(self, weights: dict[str, Array], tokenizer: Any, config: dict[str, Any]) -> None:
        self._w = weights
        self._tokenizer = tokenizer
        self._heads = int(config["num_attention_heads"])
        self._layers = int(config["num_hidden_layers"])
        self._eps = float(config["layer_norm_eps"])
        self.normalize: bool = bool(config["normalize"])
        """Whether the model itself ends in a ``Normalize`` module."""

    def encode(self, texts: Sequence[str], *, normalize: bool = False) -> list[Array]:
        """One float32 vector per text, in order; unit length if ``normalize`` or the model's."""
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        vectors: dict[int, Array] = {}
        with _one_blas_thread():
            for start in range(0, len(order), _BATCH):
                chunk = order[start : start + _BATCH]
                encodings = self._tokenizer.encode_batch([texts[i] for i in chunk])
                for i, vector in zip(chunk, self._forward(encodings), strict=True):
                    vectors[i] = vector
        unit = normalize or self.normalize
        return [_unit(vectors[i]) if unit else vectors[i] for i in range(len(texts))]

    def _forward(self, encodings: list[Any]) -> Array:
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(encodings), width), dtype=np.int64)
        mask = np.zeros((len(encodings), width), dtype=np.float32)
        for row, encoding in enumerate(encodings):
            ids[row, : len(encoding.ids)] = encoding.ids
            mask[row, : len(encoding.ids)] = 1.0
        w = self._w
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:width]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = self._norm(x, "embeddings.LayerNorm")
        # Padding gets the most negative float32 before softmax, as transformers does: exp() of
        # it is 0, so a padded text's vector equals its unpadded one.
        bias = ((1.0 - mask) * np.finfo(np.float32).min)[:, None, None, :]
        for layer in range(self._layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        summed: Array = (x * mask[:, :, None]).sum(axis=1)
        counts: Array = np.clip(mask.sum(axis=1, keepdims=True), 1e-9, None)
        return (summed / counts).astype(np.float32)

    def _layer(self, x: Array, bias: Array, prefix: str) -> Array:
        batch, width, hidden = x.shape
        size = hidden // self._heads

        def heads(name: str) -> Array:
            projected = self._linear(x, prefix + "attention.self." + name)
            return projected.reshape(batch, width, self._heads, size).transpose(0, 2, 1, 3)

        scores = heads("query") @ heads("key").transpose(0, 1, 3, 2) / np.float32(math.sqrt(size))
        scores = scores + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        attention = scores / scores.sum(axis=-1, keepdims=True)
        context = (attention @ heads("value")).transpose(0, 2, 1, 3).reshape(batch, width, hidden)
        attended = self._linear(context, prefix + "attention.output.dense") + x
        x = self._norm(attended, prefix + "attention.output.LayerNorm")
        inner = self._linear(x, prefix + "intermediate.dense")
        gelu = (0.5 * inner * (1.0 + _erf(inner / np.float32(math.sqrt(2.0))))).astype(np.float32)
        return self._norm(
            self._linear(gelu, prefix + "output.dense") + x, prefix + "output.LayerNorm"
        )

    def _linear(self, x: Array, name: str) -> Array:
        # One 2-D BLAS call; numpy runs a 3-D product against a transposed weight as a loop
        # (30x slower, measured).
        flat: Array = (
            x.reshape(-1, x.shape[-1]) @ self._w[name + ".weight"].T + self._w[name + ".bias"]
        )
        return flat.reshape(*x.shape[:-1], flat.shape[-1])

    def _norm(self, x: Array, name: str) -> Array:
        mean = x.mean(axis=-1, keepdims=True)
        variance = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        scaled: Array = (x - mean) / np.sqrt(variance + np.float32(self._eps))
        return scaled * self._w[name + ".weight"] + self._w[name + ".bias"]


def load(directory: str | Path) -> NumpyBert:
    """Load a sentence-transformers model directory this module reproduces exactly.

    Raises:
        UnsupportedModelError: anything about the directory differs from what is implemented here
            (the message says what); the caller should use sentence-transformers instead.
    """
    root = Path(directory)
    if not root.is_dir():
        raise UnsupportedModelError(f"{directory} is not a local model directory")
    config = _json(root / "config.json")
    for key, value in _BERT.items():
        if config.get(key) != value:
            raise UnsupportedModelError(f"config.json {key}={config.get(key)!r}, not {value!r}")
    modules = _json(root / "modules.json")
    types = [module.get("type") for module in modules]
    if types not in (_MODULES, _MODULES[:2]):
        raise UnsupportedModelError(
            f"modules.json lists {types}, not Transformer, Pooling[, Normalize]"
        )
    pooling = _json(root / str(modules[1].get("path", "")) / "config.json")
    if any(pooling.get(key, False) != value for key, value in _MEAN_POOLING.items()):
        raise UnsupportedModelError(f"pooling is not mean pooling alone: {pooling}")
    bert = _json(root / "sentence_bert_config.json")
    if bert.get("do_lower_case"):
        raise UnsupportedModelError("sentence_bert_config.json do_lower_case is set")
    weights = _weights(root / "model.safetensors", int(config["num_hidden_layers"]))
    tokenizer = _tokenizer(root / "tokenizer.json", int(bert["max_seq_length"]))
    return NumpyBert(weights, tokenizer, {**config, "normalize": len(types) == 3})


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UnsupportedModelError(f"cannot read {path}: {exc}") from None


def _weights(path: Path, layers: int) -> dict[str, Array]:
    """The float32 tensors of a safetensors file, as read-only views of the mapped file.

    Mapping rather than reading: a query touches a few rows of the 47 MB token table, so this
    takes ~5 ms where reading the 91 MB file took ~130 ms. The format is an 8-byte
    little-endian header length, a JSON header (name -> dtype, shape, byte offsets), the data.
    """
    try:
        mapped = np.memmap(path, dtype=np.uint8, mode="r")
        (length,) = struct.unpack("<Q", bytes(mapped[:8]))
        header = json.loads(bytes(mapped[8 : 8 + length]))
    except (OSError, ValueError, struct.error) as exc:
        raise UnsupportedModelError(f"cannot read {path}: {exc}") from None
    weights: dict[str, Array] = {}
    for name, entry in header.items():
        # position_ids (int64) is a buffer, not a weight; __metadata__ is not a tensor.
        if name == "__metadata__" or entry.get("dtype") != "F32":
            continue
        begin, end = entry["data_offsets"]
        tensor = np.frombuffer(mapped, "<f4", (end - begin) // 4, 8 + length + begin)
        # Checkpoints saved from BertForMaskedLM and the like prefix every name with "bert.".
        weights[name.removeprefix("bert.")] = tensor.reshape(entry["shape"])
    needed = ["embeddings.word_embeddings.weight", f"encoder.layer.{layers - 1}.output.dense.bias"]
    missing = [name for name in needed if name not in weights]
    if missing:
        raise UnsupportedModelError(f"{path.name} holds no float32 BERT weights {missing}")
    return weights


def _tokenizer(path: Path, max_length: int) -> Any:
    try:
        from tokenizers import Tokenizer
    except ImportError:
        raise UnsupportedModelError("the tokenizers package is not installed") from None
    if not path.is_file():
        raise UnsupportedModelError(f"no {path.name} in the model directory")
    tokenizer = Tokenizer.from_file(str(path))
    # sentence-transformers overrides the file's own padding and truncation with its
    # max_seq_length; padding is done (and masked) by `_forward`.
    tokenizer.no_padding()
    tokenizer.enable_truncation(max_length)
    return tokenizer


@contextmanager
def _one_blas_thread() -> Iterator[None]:
    """Run the products of a query on one BLAS thread, one query at a time.

    A query's matrices are small (tokens x 384): OpenBLAS's second thread only adds hand-offs,
    and on a busy machine they cost 30x (1.4 s instead of 0.04 s per query, measured under load
    12 on two cores). The lock keeps concurrent callers from restoring each other's limit.
    """
    try:
        from threadpoolctl import threadpool_limits  # type: ignore[import-untyped]
    except ImportError:  # slower on a busy machine, never different vectors
        with _blas_lock:
            yield
        return
    with _blas_lock, threadpool_limits(1, user_api="blas"):
        yield


def _unit(vector: Array) -> Array:
    norm = float(np.linalg.norm(vector))
    return (vector / max(norm, 1e-12)).astype(np.float32)
