"""The retrieval systems the eval compares: dense (Chroma + MiniLM), BM25, and a stored replay.

Each system turns a pool query into a `Retrieval`: the ranking (best first, at most ``depth``
items) and, when the system scores the whole pool, the scores of all the query's canonicals and
paired distractors, so "canonical below a distractor" can be computed (a stored top-10 replay has
none).

- `DenseSystem`: the pool's whole corpus in a `CodeIndex` (an ephemeral Chroma, or a persistent
  one at a path) with content ids, so indexing the same pool again embeds nothing; searched by
  cosine similarity of the offline all-MiniLM-L6-v2 embeddings (or any embedding given).
- `BM25System`: ``bm25s`` over code-aware tokens (`code_tokens` splits ``snake_case`` and
  ``camelCase`` identifiers).

Both order tied scores fairly (`guardrail_eval.ties`: a seeded shuffle per query, never corpus
order, which would put every canonical before its own distractors); dense retrieval fetches past
the depth until the score changes, so a tie across the cut-off is fair too.
- `ReplaySystem`: a release ``results/<model>.json`` in its stored ``rank`` order, never re-sorted.
"""

from __future__ import annotations

import hashlib
import json
import keyword
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import bm25s
import numpy as np
from bm25s.stopwords import STOPWORDS_EN

from guardrail.index import (
    AddReport,
    CodeIndex,
    SentenceTransformerEmbedding,
    Snippet,
    minilm_embedding,
)
from guardrail_eval.errors import ResultsFormatError
from guardrail_eval.pool import Pool, Query
from guardrail_eval.results import QueryResult, ResultsFile, load_results
from guardrail_eval.ties import fair_order, group_complete

if TYPE_CHECKING:
    from chromadb.api.types import Documents, Embeddings

__all__ = [
    "BM25System",
    "DenseSystem",
    "ReplaySystem",
    "Retrieval",
    "RetrievalSystem",
    "Retrieved",
    "code_tokens",
]

IndexProgress = Callable[[int, int], None]
"""``hook(done, total)`` while a system prepares (embeds) the pool's corpus."""

# Queries differ in length (a HumanEval docstring has 10 to 300 tokens) and sentence-transformers
# pads every batch to its longest text: 136 HumanEval queries took 10.0 s in batches of 128 and
# 2.8 s in batches of 16 on a 2-core machine. The corpus is embedded at the model's batch size.
_QUERY_BATCH_SIZE = 16
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")
# English function words (bm25s's list) and Python keywords carry no topic; both occur in queries
# and in code.
_STOPWORDS = frozenset(STOPWORDS_EN) | frozenset(word.lower() for word in keyword.kwlist) | {"self"}


@dataclass(frozen=True, slots=True)
class Retrieved:
    """One retrieved snippet: its pool id and the system's score (higher is better)."""

    corpus_id: str
    score: float


@dataclass(frozen=True, slots=True)
class Retrieval:
    """A system's answer to one query.

    Attributes:
        ranking: best first; at most the depth asked for.
        snippet_scores: scores of every canonical and paired distractor of the query, or None
            when the system does not score the whole pool (a replay).
    """

    ranking: tuple[Retrieved, ...]
    snippet_scores: dict[str, float] | None = None


class RetrievalSystem(Protocol):
    """What the runner needs from a retrieval system."""

    @property
    def name(self) -> str:
        """Short name used in reports and output file names (``dense-minilm``, ``bm25``)."""

    def queries(self, pool: Pool) -> list[Query]:
        """The pool queries this system answers, in evaluation order."""

    def prepare(self, pool: Pool, on_progress: IndexProgress | None = None) -> None:
        """Index the pool's corpus (a no-op for systems that need none). Call before `retrieve`."""

    def retrieve(self, pool: Pool, query: Query, depth: int) -> Retrieval:
        """The top ``depth`` snippets of the pool for ``query``."""


def code_tokens(text: str) -> list[str]:
    """Lower-case tokens of code or prose: identifiers split at ``_`` and case changes.

    ``parseISODate`` gives ``parse iso date parseisodate``: the parts, then the whole identifier
    when it had more than one part. Stopwords and keywords are dropped.

        >>> code_tokens("def count_set_bits(n): return bin(n).count('1')")
        ['count', 'set', 'bits', 'count_set_bits', 'n', 'bin', 'n', 'count', '1']
    """
    tokens: list[str] = []
    for word in _WORD.findall(text):
        parts = [
            piece.lower() for chunk in word.split("_") if chunk for piece in _CAMEL.findall(chunk)
        ]
        tokens.extend(part for part in parts if part not in _STOPWORDS)
        whole = word.lower().strip("_")
        if len(parts) > 1 and whole not in _STOPWORDS:
            tokens.append(whole)
    return tokens


class _WholePoolSystem:
    """A system that ranks the pool's own corpus for every one of its queries."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def queries(self, pool: Pool) -> list[Query]:
        return list(pool.queries)


class DenseSystem(_WholePoolSystem):
    """Dense retrieval: the pool in a Chroma `CodeIndex`, searched by embedding similarity.

    `prepare` embeds the pool's query texts ahead, in batches, so each search only looks its
    query up: embedding one text at a time cost a loaded 2-core machine ~10x longer per query.

    Args:
        embedding: a sentence-transformers embedding; default: the offline MiniLM.
        index_dir: a persistent index directory; None keeps the index in memory.
        seed: seeds the order of tied scores.
        name: the system's name in reports.
    """

    def __init__(
        self,
        embedding: SentenceTransformerEmbedding | None = None,
        *,
        index_dir: Path | None = None,
        seed: int = 0,
        name: str = "dense-minilm",
    ) -> None:
        self._embedding = embedding
        self._index_dir = index_dir
        self._seed = seed
        super().__init__(name)
        self._indexes: dict[str, CodeIndex] = {}
        self.index_report: AddReport | None = None
        """What the last `prepare` changed in the index (nothing when it was indexed already)."""

    def prepare(self, pool: Pool, on_progress: IndexProgress | None = None) -> None:
        """Add every corpus snippet to the pool's collection (already stored ones are skipped)."""
        embedding = _QueryBatch(self._embedding or minilm_embedding())
        collection = _collection_name(pool)
        index = CodeIndex(
            collection,
            path=self._index_dir,
            ephemeral=self._index_dir is None,
            embedding_function=embedding,
        )
        snippets = [
            Snippet(code=entry.code, qualified_name=cid, file=pool.name, extra={"corpus_id": cid})
            for cid, entry in pool.corpus.items()
        ]
        self.index_report = index.add(snippets, on_progress=on_progress)
        embedding.prefetch([query.query for query in pool.queries])
        self._indexes[collection] = index

    def retrieve(self, pool: Pool, query: Query, depth: int) -> Retrieval:
        index = self.index_for(pool)
        size = len(pool.corpus)
        fetch = min(depth + 1, size)
        while True:
            found = index.search(query.query, k=fetch)
            ordered = sorted((float(c.score or 0.0) for c in found), reverse=True)
            if fetch >= size or group_complete(ordered, min(depth, size)):
                break
            fetch = min(2 * fetch, size)
        order = fair_order(
            [float(c.score or 0.0) for c in found], seed=self._seed, key=query.query_id
        )
        ranking = tuple(
            Retrieved(str(found[i].metadata["corpus_id"]), float(found[i].score or 0.0))
            for i in order[:depth]
        )
        own = [*query.correct_corpus_ids, *query.paired_distractor_corpus_ids]
        scored = index.search(query.query, k=len(own), where={"corpus_id": {"$in": own}})
        scores = {str(c.metadata["corpus_id"]): float(c.score or 0.0) for c in scored}
        return Retrieval(ranking, scores if len(scores) == len(own) else None)

    def index_for(self, pool: Pool) -> CodeIndex:
        """The pool's index (one collection per corpus content); `prepare` it first."""
        index = self._indexes.get(_collection_name(pool))
        if index is None:
            raise RuntimeError(f"{self.name}: prepare(pool) was not called for pool {pool.name!r}")
        return index


class _QueryBatch(SentenceTransformerEmbedding):
    """The same model (loaded once per process); query texts embedded ahead (`prefetch`) are
    answered from memory. Documents are always embedded afresh, at the model's batch size."""

    def __init__(self, model: SentenceTransformerEmbedding) -> None:
        super().__init__(
            model.model_name,
            device=model.device,
            normalize_embeddings=model.normalize_embeddings,
            batch_size=model.batch_size,
            **model.kwargs,
        )
        self.queries: dict[str, Any] = {}

    def prefetch(self, texts: list[str]) -> None:
        """Embed the texts not embedded yet, `_QUERY_BATCH_SIZE` at a time."""
        fresh = [text for text in dict.fromkeys(texts) if text not in self.queries]
        if fresh:
            queries = SentenceTransformerEmbedding(
                self.model_name,
                device=self.device,
                normalize_embeddings=self.normalize_embeddings,
                batch_size=_QUERY_BATCH_SIZE,
                **self.kwargs,
            )
            self.queries.update(zip(fresh, queries(fresh), strict=True))

    def embed_query(self, input: Documents) -> Embeddings:
        self.prefetch(list(input))
        return [self.queries[text] for text in input]


class BM25System(_WholePoolSystem):
    """Lexical retrieval: BM25 (``bm25s``, Lucene variant) over `code_tokens`.

    Args:
        seed: seeds the tie-break order of equal scores.
        name: the system's name in reports.
    """

    def __init__(self, *, seed: int = 0, name: str = "bm25") -> None:
        self._seed = seed
        super().__init__(name)
        self._prepared: tuple[str, Any, list[str]] | None = None

    def prepare(self, pool: Pool, on_progress: IndexProgress | None = None) -> None:
        ids = list(pool.corpus)
        model = bm25s.BM25()
        model.index([code_tokens(pool.corpus[cid].code) for cid in ids], show_progress=False)
        self._prepared = (_collection_name(pool), model, ids)
        if on_progress is not None:
            on_progress(len(ids), len(ids))

    def retrieve(self, pool: Pool, query: Query, depth: int) -> Retrieval:
        if self._prepared is None or self._prepared[0] != _collection_name(pool):
            raise RuntimeError(f"{self.name}: prepare(pool) was not called for pool {pool.name!r}")
        _, model, ids = self._prepared
        tokens = code_tokens(query.query)
        scores = (
            np.asarray(model.get_scores(tokens), dtype=np.float64) if tokens else np.zeros(len(ids))
        )
        order = fair_order(scores, seed=self._seed, key=query.query_id)[:depth]
        ranking = tuple(Retrieved(ids[i], float(scores[i])) for i in order)
        position = {cid: i for i, cid in enumerate(ids)}
        own = [*query.correct_corpus_ids, *query.paired_distractor_corpus_ids]
        return Retrieval(ranking, {cid: float(scores[position[cid]]) for cid in own})


class ReplaySystem:
    """A stored ranking (a release ``results/<model>.json``), replayed in stored rank order.

    Use `ReplaySystem.load`; it checks the file against the pool before anything runs.
    """

    def __init__(self, results: ResultsFile, path: Path, pool: Pool) -> None:
        self.results = results
        self.path = path
        self._by_query: dict[str, QueryResult] = {q.query_id: q for q in results.per_query}
        self._check(pool)

    @classmethod
    def load(cls, path: Path, pool: Pool) -> ReplaySystem:
        """Load a results file and check that every query and corpus id is in ``pool``.

        Raises:
            ResultsFormatError: the file is malformed, or names a query or snippet the pool does
                not have (with the line).
        """
        return cls(load_results(path), path, pool)

    @property
    def name(self) -> str:
        return self.path.stem

    def queries(self, pool: Pool) -> list[Query]:
        by_id = {query.query_id: query for query in pool.queries}
        # A query pool validation dropped (--relabel) is in the results file but not replayed.
        return [by_id[r.query_id] for r in self.results.per_query if r.query_id in by_id]

    def prepare(self, pool: Pool, on_progress: IndexProgress | None = None) -> None:
        if on_progress is not None:
            on_progress(len(self._by_query), len(self._by_query))

    def retrieve(self, pool: Pool, query: Query, depth: int) -> Retrieval:
        stored = self._by_query[query.query_id].ranked()[:depth]
        return Retrieval(tuple(Retrieved(item.corpus_id, item.similarity) for item in stored))

    def _check(self, pool: Pool) -> None:
        queries = {query.query_id for query in pool.queries}
        text: str | None = None
        for index, result in enumerate(self.results.per_query):
            unknown: tuple[str, str] | None = None
            if result.query_id not in queries:
                unknown = ("query_id", result.query_id)
            for rank, item in enumerate(result.top_results):
                if unknown is None and item.corpus_id not in pool.corpus:
                    unknown = (f"top_results[{rank}].corpus_id", item.corpus_id)
            if unknown is not None:
                text = text if text is not None else self.path.read_text(encoding="utf-8-sig")
                field, value = unknown
                kind = "query" if field == "query_id" else "corpus id"
                raise ResultsFormatError(
                    self.path,
                    _line_of_value(text, value),
                    f"per_query[{index}].{field}",
                    f"{kind} {value!r} is not in pool {pool.name!r}",
                    hint="replay a results file against the pool it was computed on (--pool DIR)",
                )


def _collection_name(pool: Pool) -> str:
    """A collection per pool content: the same corpus always maps to the same collection."""
    digest = hashlib.sha256()
    for cid, entry in pool.corpus.items():
        digest.update(json.dumps([cid, entry.code]).encode("utf-8"))
    slug = re.sub(r"[^a-zA-Z0-9._-]+", "-", pool.name).strip("-._")[:40] or "pool"
    return f"eval-{slug}-{digest.hexdigest()[:16]}"


def _line_of_value(text: str, value: str) -> int | None:
    """1-based line of the first occurrence of ``value`` as a JSON string in ``text``."""
    position = text.find(json.dumps(value))
    return text.count("\n", 0, position) + 1 if position >= 0 else None
