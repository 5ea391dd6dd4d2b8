"""`CodeIndex`: a Chroma collection of code snippets.

This is the one module that talks to a Chroma client, and the one place where Chroma's errors
become guardrail's (`CodeIndexError`, `ChromaUnavailableError`).

Where the collection lives, in order: an explicit ``client``; a server at ``url`` (``HttpClient``);
an in-memory database when ``ephemeral`` (all ephemeral clients of a process share one database,
so use distinct collection names); a local directory (``PersistentClient``) at ``path``. With none
of them given, ``$GUARDRAIL_CHROMA_URL`` names a server, else ``$GUARDRAIL_INDEX_DIR`` or the
platform's user data directory holds a local index. Telemetry is always off.

Ids are content ids (see `Snippet.content_id`), and every stored snippet carries the sha256 of
everything stored with it, so adding the same snippets again embeds nothing and writes nothing.

The snippets to embed are written shortest first (`embedding_order`): each write's texts are then
of about one length, so a transformer pads them to little more than their own length instead of
to the longest function of a random batch (on 768 real functions with the bundled MiniLM, 10-15%
less CPU time; docs/audits.md). Padding is masked, so the vectors are the same to float32
rounding; what is stored does not depend on the order.

Readers open with ``create=False``: a missing index directory or collection is then an
`IndexNotFoundError` and nothing is created (no directory, no database file, no collection), so a
typo in ``--path`` or ``--collection`` does not leave an empty index behind.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Any, TypeVar, cast

import platformdirs
from chromadb.api import ClientAPI
from chromadb.api.types import Documents, Embeddable, EmbeddingFunction
from chromadb.base_types import Where
from pydantic import BaseModel, ConfigDict

from guardrail.gate import Candidate
from guardrail.index.chroma_client import (
    chroma_errors,
    existing_collection,
    make_client,
    require_local_index,
)
from guardrail.index.errors import (
    CollectionNameError,
)
from guardrail.index.interrupts import holding_interrupts
from guardrail.index.snippet import Snippet, decode_metadata, stored_location
from guardrail.roots import register_context_root, vouching_root

__all__ = ["AddReport", "CodeIndex", "ProgressHook", "default_index_path", "embedding_order"]

ProgressHook = Callable[[int, int], None]
"""Called as ``hook(done, total)`` after each batch written (``total`` = snippets to embed)."""

DEFAULT_BATCH_SIZE = 256
DEFAULT_PAGE_SIZE = 500
"""Snippets per Chroma ``get`` when iterating an index (`CodeIndex.snippets`)."""
# Chroma's rule for collection names, checked before a client (or a directory) is made.
_COLLECTION_NAME = re.compile(r"[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]")
_ROOTS_KEY = "guardrail_roots"  # collection metadata: the indexed roots, as JSON
_LOOKUP_CHUNK = 500  # ids or file names per `get` call; keeps request bodies and SQL small
_EMBED_CHUNK = 64  # texts embedded between two progress reports (a second or two on a CPU)

_T = TypeVar("_T")


class AddReport(BaseModel):
    """What an `add` or `replace_files` call changed."""

    model_config = ConfigDict(frozen=True)

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0

    def __add__(self, other: AddReport) -> AddReport:
        return AddReport(
            added=self.added + other.added,
            updated=self.updated + other.updated,
            unchanged=self.unchanged + other.unchanged,
            removed=self.removed + other.removed,
        )


def default_index_path() -> Path:
    """``$GUARDRAIL_INDEX_DIR``, else ``<user data dir>/guardrail/index``."""
    base = os.environ.get("GUARDRAIL_INDEX_DIR")
    return Path(base) if base else Path(platformdirs.user_data_dir("guardrail")) / "index"


class CodeIndex:
    """A Chroma collection of code snippets, searched by meaning.

    Args:
        collection: collection name (3-512 characters of ``[a-zA-Z0-9._-]``).
        path: directory of a local (persistent) index.
        url: a Chroma server, e.g. ``http://127.0.0.1:8000``.
        client: an existing Chroma client (overrides the three above).
        embedding_function: a Chroma embedding function; default: the offline MiniLM.
        ephemeral: keep everything in memory for this process.
        batch_size: snippets per write (each write embeds that many texts).
        create: create the index directory and the collection when missing (for writers); with
            ``False`` (for readers) a missing one raises and nothing is created.

    Raises:
        CodeIndexError: Chroma refused the collection (bad name, embedding-function conflict).
        IndexNotFoundError: ``create=False`` and the index directory or collection is missing.
        ChromaUnavailableError: no server answers at ``url``.
    """

    def __init__(
        self,
        collection: str = "guardrail",
        *,
        path: str | Path | None = None,
        url: str | None = None,
        client: ClientAPI | None = None,
        embedding_function: EmbeddingFunction[Documents] | None = None,
        ephemeral: bool = False,
        batch_size: int = DEFAULT_BATCH_SIZE,
        create: bool = True,
    ) -> None:
        chosen = [name for name, value in (("path", path), ("url", url)) if value is not None]
        if ephemeral:
            chosen.append("ephemeral")
        if client is not None:
            chosen.append("client")
        if len(chosen) > 1:
            raise ValueError(f"give at most one of path, url, client, ephemeral (got {chosen})")
        if batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {batch_size}")
        if not _COLLECTION_NAME.fullmatch(collection):
            raise CollectionNameError(f"collection name {collection!r} is not one Chroma accepts")
        if embedding_function is None:
            from guardrail.index.embeddings import minilm_embedding

            embedding_function = minilm_embedding()
        self.embedding_function = embedding_function
        self.name = collection
        if not chosen:
            url = os.environ.get("GUARDRAIL_CHROMA_URL") or None
        directory = Path(path) if path is not None else default_index_path()
        self.location = (
            "<client>" if client else url or ("<memory>" if ephemeral else str(directory))
        )
        """Where the collection lives: the server URL, the index directory, or a placeholder."""
        if client is None:
            if not (create or url or ephemeral):
                require_local_index(directory)
            client = make_client(directory=directory, url=url, ephemeral=ephemeral)
        hint = (
            "if the collection exists with another embedding, pass that embedding"
            " (--embedding) or another collection name"
        )
        function = cast("EmbeddingFunction[Embeddable]", embedding_function)
        self._embedding_function = function
        with chroma_errors(f"open collection {collection!r}", url, hint):
            self._batch_size = min(batch_size, client.get_max_batch_size())
            if create:
                self._collection = client.get_or_create_collection(
                    collection,
                    configuration={"hnsw": {"space": "cosine"}},
                    embedding_function=function,
                )
            else:
                self._collection = existing_collection(client, collection, function, self.location)
        # The raw JSON: `.configuration` rebuilds the persisted embedding function with Chroma's
        # own class, which imports sentence-transformers and loads the model (8 s, measured).
        self._to_similarity = _similarity_for(self._collection.configuration_json)
        for root in self.roots():
            register_context_root(root)

    # -- writing -----------------------------------------------------------------------------

    def add(
        self, snippets: Iterable[Snippet], *, on_progress: ProgressHook | None = None
    ) -> AddReport:
        """Store snippets; those already stored with identical content are left alone.

        A snippet whose id exists with different content (possible with explicit ids) is
        replaced. Two snippets with the same id in one call must be identical; they count once.
        All-or-nothing as `replace_files` is.
        """
        return self._store(_unique(snippets), [], on_progress)

    def replace_files(
        self,
        files: Mapping[str, Sequence[Snippet]],
        *,
        on_progress: ProgressHook | None = None,
    ) -> AddReport:
        """Make the index hold exactly ``files[f]`` for each file ``f`` given.

        Snippets of those files that are not in the new set are removed; unchanged ones are not
        embedded again. Every snippet must name the file it is listed under.

        All or nothing, as far as a process can make it: every new snippet is embedded first
        (``on_progress(done, total)`` counts them) and nothing is written until all are, so an
        interrupt or an error while embedding (the slow part) leaves the index as it was; the
        writes that follow hold off SIGINT until they are done (in the main thread). Only a
        process killed while writing can leave a part written.
        """
        for file, snippets in files.items():
            strays = sorted({s.path for s in snippets if s.path != file})
            if strays:
                raise ValueError(f"snippets listed under {file!r} name other files: {strays}")
        keep = {s.index_id for snippets in files.values() for s in snippets}
        with self._errors("read existing snippets"):
            old = self._ids_of_files(list(files))
        obsolete = [id_ for id_ in old if id_ not in keep]
        records = _unique(s for snippets in files.values() for s in snippets)
        return self._store(records, obsolete, on_progress)

    def _store(
        self,
        records: Mapping[str, Snippet],
        obsolete: Sequence[str],
        on_progress: ProgressHook | None,
    ) -> AddReport:
        """Embed what is new in ``records``, then remove ``obsolete`` and write, interrupts held."""
        with self._errors("read existing snippets"):
            stored = self._stored_hashes(list(records))
        fresh = embedding_order(
            [s for key, s in records.items() if stored.get(key) != s.content_sha256]
        )
        vectors = self._embed([s.code for s in fresh], on_progress)
        with holding_interrupts():
            self.record_roots(_vouching_roots(records.values()))
            with self._errors("remove replaced snippets"):
                for _, gone in _batches(obsolete, self._batch_size):
                    self._collection.delete(ids=gone)
            with self._errors("add snippets"):
                for done, batch in _batches(fresh, self._batch_size):
                    self._collection.upsert(
                        ids=[s.index_id for s in batch],
                        embeddings=vectors[done - len(batch) : done],
                        documents=[s.code for s in batch],
                        metadatas=[s.to_metadata() for s in batch],
                    )
        updated = sum(1 for s in fresh if s.index_id in stored)
        return AddReport(
            added=len(fresh) - updated,
            updated=updated,
            unchanged=len(records) - len(fresh),
            removed=len(obsolete),
        )

    def _embed(self, texts: Sequence[str], on_progress: ProgressHook | None) -> list[Any]:
        """The collection's embedding of ``texts``, a chunk at a time: ``on_progress(0, total)``
        before the first (the clock starts there), then after each; no call when none is new."""
        if on_progress is not None and texts:
            on_progress(0, len(texts))
        vectors: list[Any] = []
        with self._errors("embed snippets"):
            for done, chunk in _batches(texts, min(_EMBED_CHUNK, self._batch_size)):
                vectors.extend(self._embedding_function(list(chunk)))
                if on_progress is not None:
                    on_progress(done, len(texts))
        return vectors

    def replace_file(
        self,
        file: str | Path,
        snippets: Sequence[Snippet],
        *,
        on_progress: ProgressHook | None = None,
    ) -> AddReport:
        """`replace_files` for one file; an empty ``snippets`` removes the file from the index."""
        return self.replace_files({str(file): snippets}, on_progress=on_progress)

    def record_roots(self, roots: Iterable[str]) -> None:
        """Trust ``roots`` as context roots (`guardrail.roots`), here and in every process that
        opens this collection: they are kept in the collection's own metadata, which documents
        (and so a planted entry) cannot write. `add` records the context roots its snippets lie
        in (the folders `split_tree` read), never the wider ``sys.path`` folder above them; a
        writer may record the folder it walked (`TreeSplit.root`) whatever it held."""
        known = set(self.roots())
        for root in roots:
            known.add(str(register_context_root(root)))
        if known != set(self.roots()):
            metadata = dict(self._collection.metadata or {})
            metadata[_ROOTS_KEY] = json.dumps(sorted(known))
            with self._errors("record the indexed roots"):
                self._collection.modify(metadata=metadata)

    # -- reading -----------------------------------------------------------------------------

    def roots(self) -> list[str]:
        """The folders indexed into this collection (`Snippet.root` of what was added)."""
        stored = (self._collection.metadata or {}).get(_ROOTS_KEY)
        try:
            roots = json.loads(stored) if isinstance(stored, str) else []
        except json.JSONDecodeError:
            return []
        return [root for root in roots if isinstance(root, str)] if isinstance(roots, list) else []

    def search(
        self, query: str, k: int = 10, *, where: Mapping[str, Any] | None = None
    ) -> list[Candidate]:
        """The ``k`` snippets closest to ``query``, best first.

        Each candidate's ``score`` is the cosine similarity (1 - cosine distance) and its
        ``metadata`` the snippet's, decoded (``tests`` is a list of strings again). ``where`` is a
        Chroma metadata filter, e.g. ``{"module": "app.views"}``.
        """
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        with self._errors("search"):
            result = self._collection.query(
                query_texts=[query],
                n_results=k,
                where=dict(where) if where else None,
                include=["documents", "metadatas", "distances"],
            )
        ids = result["ids"][0]
        documents = (result["documents"] or [[]])[0]
        metadatas = (result["metadatas"] or [[]])[0]
        distances = (result["distances"] or [[]])[0]
        return [
            Candidate(
                code=document or "",
                id=id_,
                score=self._to_similarity(distance),
                metadata=decode_metadata(metadata),
            )
            for id_, document, metadata, distance in zip(
                ids, documents, metadatas, distances, strict=True
            )
        ]

    async def asearch(
        self, query: str, k: int = 10, *, where: Mapping[str, Any] | None = None
    ) -> list[Candidate]:
        """`search` in a worker thread (embedding the query is CPU-bound)."""
        return await asyncio.to_thread(self.search, query, k, where=where)

    def get(self, ids: Sequence[str]) -> list[Snippet]:
        """The stored snippets with these ids, in the order asked; unknown ids are left out."""
        found: dict[str, Snippet] = {}
        with self._errors("get snippets"):
            for _, chunk in _batches(list(ids), _LOOKUP_CHUNK):
                result = self._collection.get(ids=chunk, include=["documents", "metadatas"])
                documents = result["documents"] or []
                metadatas = result["metadatas"] or []
                for id_, document, metadata in zip(
                    result["ids"], documents, metadatas, strict=True
                ):
                    found[id_] = Snippet.from_stored(id_, document, metadata)
        return [found[id_] for id_ in ids if id_ in found]

    def snippets(
        self, *, where: Mapping[str, Any] | None = None, page_size: int = DEFAULT_PAGE_SIZE
    ) -> Iterator[Snippet]:
        """Every stored snippet (or those matching the Chroma filter ``where``), in a stable order.

        The order is by file, then start line, then qualified name, then id, whatever order they
        were written in. Reading is paged (``page_size`` snippets per Chroma ``get``): first the
        keys, then the snippets a page at a time, so memory holds one page of code at once.
        Writing to the collection while iterating is not supported (a snippet removed meanwhile
        is left out).
        """
        if page_size < 1:
            raise ValueError(f"page_size must be at least 1, got {page_size}")
        order: list[tuple[str, int, str, str]] = []
        filter_ = cast("Where", dict(where)) if where else None
        with self._errors("list snippets"):
            while True:
                result = self._collection.get(
                    where=filter_, limit=page_size, offset=len(order), include=["metadatas"]
                )
                for id_, metadata in zip(result["ids"], result["metadatas"] or [], strict=True):
                    order.append(_order_key(id_, metadata or {}))
                if len(result["ids"]) < page_size:
                    break
        order.sort()
        for _, page in _batches([key[-1] for key in order], page_size):
            yield from self.get(page)

    def embeddings(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """The stored embedding vector of each of these ids (unknown ids are left out).

        What the retriever compares: an audit uses them to tell which snippets a query cannot
        separate, without embedding anything again.
        """
        found: dict[str, list[float]] = {}
        with self._errors("read embeddings"):
            for _, chunk in _batches(list(ids), _LOOKUP_CHUNK):
                result = self._collection.get(ids=chunk, include=["embeddings"])
                vectors = result["embeddings"]
                if vectors is None:
                    continue
                for id_, vector in zip(result["ids"], vectors, strict=True):
                    found[id_] = [float(x) for x in vector]
        return found

    def count(self) -> int:
        """Number of snippets in the collection (also ``len(index)``)."""
        with self._errors("count snippets"):
            return self._collection.count()

    def __len__(self) -> int:
        return self.count()

    def __repr__(self) -> str:
        return f"CodeIndex(collection={self.name!r}, location={self.location!r})"

    # -- internals ---------------------------------------------------------------------------

    def _errors(self, action: str) -> AbstractContextManager[None]:
        return chroma_errors(
            f"{action} in collection {self.name!r}",
            self.location if self.location.startswith("http") else None,
        )

    def _stored_hashes(self, ids: list[str]) -> dict[str, str]:
        hashes: dict[str, str] = {}
        for _, chunk in _batches(ids, _LOOKUP_CHUNK):
            result = self._collection.get(ids=chunk, include=["metadatas"])
            for id_, metadata in zip(result["ids"], result["metadatas"] or [], strict=True):
                hashes[id_] = str((metadata or {}).get("content_sha256", ""))
        return hashes

    def files(self) -> set[str]:
        """Every source file the index holds snippets of, as host paths (`Snippet.path`)."""
        with self._errors("list indexed files"):
            result = self._collection.get(include=["metadatas"])
        found = (stored_location(metadata or {}) for metadata in result["metadatas"] or [])
        return {path for path in found if path is not None}

    def _ids_of_files(self, files: list[str]) -> list[str]:
        """Ids of the snippets of ``files`` (host paths): stored by absolute ``file`` (older
        collections) or by ``root`` and a relative ``file``; looked up by every folder above
        each file as a possible root, and kept only where root and file make the path."""
        ids: list[str] = []
        for _, chunk in _batches(files, _LOOKUP_CHUNK):
            roots = sorted({str(parent) for file in chunk for parent in Path(file).parents})
            where = cast("Where", {"$or": [{"file": {"$in": chunk}}, {"root": {"$in": roots}}]})
            result = self._collection.get(where=where, include=["metadatas"])
            wanted = set(chunk)
            ids.extend(
                id_
                for id_, metadata in zip(result["ids"], result["metadatas"] or [], strict=True)
                if stored_location(metadata or {}) in wanted
            )
        return ids


def embedding_order(snippets: Sequence[Snippet]) -> list[Snippet]:
    """``snippets`` in the order they are embedded: by the length of their text (the embedded
    document), shortest first, ties in the given order (see the module docstring)."""
    return sorted(snippets, key=lambda snippet: len(snippet.code))


def _similarity_for(configuration: Mapping[str, Any]) -> Callable[[float], float]:
    """Distance to similarity for the collection's space (1 is identical)."""
    hnsw = configuration.get("hnsw") or {}
    space = hnsw.get("space", "l2") if isinstance(hnsw, Mapping) else "l2"
    if space == "l2":
        # Chroma's l2 is the squared distance; for unit vectors it equals 2 - 2 cos.
        return lambda distance: 1.0 - distance / 2.0
    return lambda distance: 1.0 - distance


def _vouching_roots(snippets: Iterable[Snippet]) -> set[str]:
    """The context roots (`guardrail.roots`) the snippets' files lie in, as strings."""
    found = (vouching_root(s.path) for s in snippets if s.file)
    return {str(root) for root in found if root is not None}


def _order_key(id_: str, metadata: Mapping[str, Any]) -> tuple[str, int, str, str]:
    line = metadata.get("start_line")
    return (
        stored_location(metadata) or "",
        line if isinstance(line, int) else 0,
        str(metadata.get("qualified_name", "")),
        id_,
    )


def _unique(snippets: Iterable[Snippet]) -> dict[str, Snippet]:
    records: dict[str, Snippet] = {}
    for snippet in snippets:
        key = snippet.index_id
        previous = records.get(key)
        if previous is not None and previous.content_sha256 != snippet.content_sha256:
            raise ValueError(f"two different snippets share the id {key!r}")
        records.setdefault(key, snippet)
    return records


def _batches(items: Sequence[_T], size: int) -> Iterator[tuple[int, list[_T]]]:
    """Consecutive slices of ``items`` with the count done after each."""
    for start in range(0, len(items), size):
        batch = list(items[start : start + size])
        yield start + len(batch), batch
