"""Clusters of snippets a retriever cannot tell apart, found without comparing all pairs.

1. Candidates: each snippet's token shingles (`guardrail.audit.tokens`) go into a MinHash
   signature, and locality-sensitive hashing (``datasketch.MinHashLSH``) yields the pairs whose
   estimated Jaccard similarity reaches ``jaccard``: near-linear in the number of snippets.
2. Confirmation: a candidate pair is a near-clone when the retriever's own embeddings are
   within ``embedding`` cosine similarity (the vectors stored in the index, or, with ``embed``,
   computed now for the snippets of candidate pairs only: a tree's other functions are never
   embedded), or when the token edit distance is small (similarity at least ``tokens``).
3. Clusters: confirmed pairs joined transitively (union-find), members in index order.

Everything is deterministic: fixed MinHash seed, pairs and members sorted, so two runs over the
same index give the same clusters.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from guardrail.audit.tokens import code_tokens, shingles, token_similarity
from guardrail.index.snippet import Snippet

__all__ = [
    "ClonePair",
    "Cluster",
    "ClusterReport",
    "ClusterSettings",
    "Embedder",
    "find_clusters",
]

_SEED = 1  # MinHash permutations; fixed so runs agree

Embedder = Callable[[Sequence[Snippet]], Mapping[str, Sequence[float]]]
"""Embeds snippets: their vectors by `Snippet.index_id`, as the index would store them."""


class ClusterSettings(BaseModel):
    """Thresholds of `find_clusters`.

    Attributes:
        jaccard: LSH threshold on the estimated Jaccard similarity of token shingles.
        embedding: cosine similarity of stored embeddings that confirms a pair.
        tokens: token similarity (``1 - edit distance / length``) that confirms a pair.
        min_tokens: snippets with fewer tokens are left out (``return self._x`` is alike
            everywhere and never a copy-paste hazard).
        shingle: tokens per shingle.
        num_perm: MinHash permutations.
    """

    model_config = ConfigDict(frozen=True)

    jaccard: float = Field(default=0.5, gt=0, le=1)
    embedding: float = Field(default=0.97, gt=0, le=1)
    tokens: float = Field(default=0.85, gt=0, le=1)
    min_tokens: int = Field(default=20, ge=1)
    shingle: int = Field(default=4, ge=1)
    num_perm: int = Field(default=128, ge=16, le=1024)


class ClonePair(BaseModel):
    """Two snippets confirmed as near-clones (``left`` before ``right`` in index order)."""

    model_config = ConfigDict(frozen=True)

    left: str
    right: str
    token_similarity: float | None  # None: below the confirmation band (confirmed by embedding)
    embedding_similarity: float | None  # None: the index holds no vectors for one of them


class Cluster(BaseModel):
    """Snippets joined by confirmed pairs; ``members`` in index order."""

    model_config = ConfigDict(frozen=True)

    members: tuple[Snippet, ...]
    pairs: tuple[ClonePair, ...]


class ClusterReport(BaseModel):
    """The clusters and the counts that say how much work finding them was."""

    model_config = ConfigDict(frozen=True)

    snippets: int
    compared: int  # snippets with at least ``min_tokens`` tokens
    candidate_pairs: int  # from LSH
    confirmed_pairs: int
    embedded: int = 0  # snippets embedded by ``embed`` (those of candidate pairs)
    clusters: tuple[Cluster, ...]


def find_clusters(
    snippets: Sequence[Snippet],
    embeddings: Mapping[str, Sequence[float]] | None = None,
    settings: ClusterSettings | None = None,
    *,
    on_progress: Callable[[int, int], None] | None = None,
    embed: Embedder | None = None,
) -> ClusterReport:
    """Near-clone clusters among ``snippets`` (see the module docstring).

    ``embeddings`` maps `Snippet.index_id` to its stored vector (`CodeIndex.embeddings`);
    ``embed`` computes the missing vectors of the snippets LSH pairs up (and no others); with
    neither, pairs are confirmed by token edit distance alone. ``on_progress(done, total)``
    is called while signatures are computed.
    """
    from datasketch import MinHash, MinHashLSH

    chosen = settings or ClusterSettings()
    tokens = [code_tokens(snippet.code) for snippet in snippets]
    compared = [i for i, found in enumerate(tokens) if len(found) >= chosen.min_tokens]
    lsh = MinHashLSH(threshold=chosen.jaccard, num_perm=chosen.num_perm)
    signatures: dict[int, MinHash] = {}
    for done, i in enumerate(compared, start=1):
        signature = MinHash(num_perm=chosen.num_perm, seed=_SEED)
        signature.update_batch([s.encode("utf-8", "surrogatepass") for s in shingles(tokens[i])])
        signatures[i] = signature
        lsh.insert(str(i), signature)
        if on_progress is not None and (done % 500 == 0 or done == len(compared)):
            on_progress(done, len(compared))
    candidates = sorted(
        {
            (min(i, int(j)), max(i, int(j)))
            for i in compared
            for j in lsh.query(signatures[i])
            if int(j) != i
        }
    )
    known = dict(embeddings or {})
    missing = sorted({i for pair in candidates for i in pair if snippets[i].index_id not in known})
    if embed is not None and missing:
        known.update(embed([snippets[i] for i in missing]))
    vectors = _unit_vectors(snippets, known)
    pairs: list[tuple[int, int, ClonePair]] = []
    for i, j in candidates:
        pair = _confirm(i, j, snippets=snippets, tokens=tokens, vectors=vectors, settings=chosen)
        if pair is not None:
            pairs.append((i, j, pair))
    return ClusterReport(
        snippets=len(snippets),
        compared=len(compared),
        candidate_pairs=len(candidates),
        confirmed_pairs=len(pairs),
        embedded=len(missing) if embed is not None else 0,
        clusters=tuple(_clusters(snippets, pairs)),
    )


def _confirm(
    i: int,
    j: int,
    *,
    snippets: Sequence[Snippet],
    tokens: Sequence[Sequence[str]],
    vectors: Mapping[int, list[float]],
    settings: ClusterSettings,
) -> ClonePair | None:
    cosine = None
    if i in vectors and j in vectors:
        cosine = round(sum(a * b for a, b in zip(vectors[i], vectors[j], strict=True)), 6)
    similar = token_similarity(tokens[i], tokens[j], settings.tokens)
    by_embedding = cosine is not None and cosine >= settings.embedding
    if similar is None and not by_embedding:
        return None
    return ClonePair(
        left=snippets[i].index_id,
        right=snippets[j].index_id,
        token_similarity=None if similar is None else round(similar, 6),
        embedding_similarity=cosine,
    )


def _unit_vectors(
    snippets: Sequence[Snippet], embeddings: Mapping[str, Sequence[float]]
) -> dict[int, list[float]]:
    vectors: dict[int, list[float]] = {}
    for i, snippet in enumerate(snippets):
        vector = embeddings.get(snippet.index_id)
        if vector is None:
            continue
        norm = math.sqrt(sum(x * x for x in vector))
        if norm > 0:
            vectors[i] = [x / norm for x in vector]
    return vectors


def _clusters(
    snippets: Sequence[Snippet], pairs: Sequence[tuple[int, int, ClonePair]]
) -> list[Cluster]:
    parent: dict[int, int] = {}

    def root(i: int) -> int:
        parent.setdefault(i, i)
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j, _ in pairs:
        a, b = root(i), root(j)
        if a != b:
            parent[max(a, b)] = min(a, b)
    groups: dict[int, list[int]] = {}
    for i in sorted(parent):
        groups.setdefault(root(i), []).append(i)
    by_group: dict[int, list[ClonePair]] = {}
    for i, _, pair in pairs:
        by_group.setdefault(root(i), []).append(pair)
    return [
        Cluster(members=tuple(snippets[i] for i in members), pairs=tuple(by_group[key]))
        for key, members in sorted(groups.items())
    ]
