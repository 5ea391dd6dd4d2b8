"""A user's own LangChain or LlamaIndex retriever as an eval `RetrievalSystem`.

``guardrail audit retriever --retriever module:factory`` runs the eval on the retriever a
pipeline really uses (its embedding, hosted or local, its vector store, its reranker) rather than
on the eval's dense or BM25 system. The factory contract::

    def make_retriever(documents: list[Document], k: int) -> BaseRetriever: ...

- ``documents``: the pool's whole corpus, one per snippet, freshly made for each call. Each
  carries an opaque id as ``metadata["corpus_id"]`` and nothing else (no label, no bug type):
  ``d_`` and 16 hex digits of a hash of the pool's id (`opaque_document_id`), never the pool's
  id itself, whose shape (``key~bug_type``) or order (a canonical's ``c_0001`` before its
  mutants' ``c_0002``...) could give a canonical away; the documents are in the order of those
  ids. LangChain: ``langchain_core.documents.Document`` with ``page_content`` = the code and
  ``id`` = the opaque id. LlamaIndex: ``llama_index.core.schema.TextNode`` with ``text`` = the
  code and ``id_`` = the opaque id; ``corpus_id`` is excluded from what LlamaIndex embeds and
  shows an LLM, so only the code is embedded.
- ``k``: how many results each query should return (the eval's depth, ``max(fetch_k, 10)``).
  More are cut, fewer are scored as they are.
- it returns a ``langchain_core.retrievers.BaseRetriever`` (queried with ``invoke``) or a
  ``llama_index.core.retrievers.BaseRetriever`` (queried with ``retrieve``).

Which framework's documents the factory gets is read from its annotations (the return type or
the first parameter's), or given (``--framework``); with neither and only one of the two
frameworks installed, that one. What the factory returns is checked against it.

Results map back through ``metadata["corpus_id"]``: a result without one, or naming no document
the factory was given, is a `RetrieverError`, as is an exception of the factory or of the
retriever; each names the factory (and the query). A snippet returned more than once (a
retriever over chunks of the documents) counts at its best rank. Scores, shown in results files
only: a LlamaIndex ``NodeWithScore.score``, else LangChain's ``metadata["score"]`` or
``["relevance_score"]`` (what rerankers set), else 0.0. The scores of a query's canonicals and
distractors are not all known (as for a replay), so "canonical below a distractor" is not
computed for this system.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import math
import numbers
import re
import typing
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from guardrail_eval.errors import EvalSettingError, RetrieverError
from guardrail_eval.pool import Pool, Query
from guardrail_eval.systems import IndexProgress, Retrieval, Retrieved

__all__ = ["CustomSystem", "Factory", "Framework", "load_factory", "opaque_document_id"]

CORPUS_ID = "corpus_id"
"""The metadata key every document carries and every result must keep."""

_SCORE_KEYS = ("score", "relevance_score")


def opaque_document_id(pool: Pool, corpus_id: str) -> str:
    """The id a retriever's document carries for ``corpus_id``: a hash that says nothing of the
    snippet's label, its family or its place in the corpus."""
    digest = hashlib.sha256(f"{pool.name}\0{corpus_id}".encode()).hexdigest()
    return f"d_{digest[:16]}"


_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._-]*")


class Framework(StrEnum):
    """The retriever's framework: which documents the factory gets, how it is queried."""

    LANGCHAIN = "langchain"
    LLAMAINDEX = "llamaindex"

    @property
    def package(self) -> str:
        """The module that must import for this framework."""
        return "langchain_core" if self is Framework.LANGCHAIN else "llama_index.core"

    @property
    def retriever_class(self) -> str:
        """Where the base class the factory must return lives (for messages)."""
        return f"{self.package}.retrievers.BaseRetriever"

    def installed(self) -> bool:
        try:
            return importlib.util.find_spec(self.package) is not None
        except ImportError:  # a parent package that is not there
            return False


@dataclass(frozen=True)
class Factory:
    """A resolved ``module:factory``: the callable and the framework it builds for."""

    spec: str
    function: Callable[..., Any]
    framework: Framework

    @property
    def attribute(self) -> str:
        """The factory's name in its module (``make_retriever``)."""
        return self.spec.rpartition(":")[2]


def load_factory(spec: str, framework: Framework | None = None) -> Factory:
    """Import ``module`` of ``module:factory`` and take its ``factory`` (dotted attributes allowed).

    ``framework`` overrides what the factory's annotations say (see the module docstring).

    Raises:
        RetrieverError: the spec does not parse, the module does not import (or raises while
            importing), the attribute is missing or not callable, it cannot be called as
            ``factory(documents, k)``, or the framework cannot be told or is not installed.
    """
    module_name, colon, attribute = spec.partition(":")
    if not colon or not _dotted(module_name) or not _dotted(attribute):
        raise RetrieverError(
            f"--retriever {spec!r}: expected module:factory, such as my_pipeline:make_retriever",
            hint="the module is imported from the current directory or sys.path",
        )
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (module_name + ".").startswith(exc.name + "."):
            raise RetrieverError(
                f"--retriever {spec!r}: no module named {exc.name!r}",
                hint="run from the folder that holds it, or put it on PYTHONPATH",
            ) from None
        raise RetrieverError(
            f"--retriever {spec!r}: importing {module_name} failed: {exc}"
        ) from exc
    except Exception as exc:  # the user's module: any exception it raises is theirs to fix
        raise RetrieverError(
            f"--retriever {spec!r}: importing {module_name} raised {_describe(exc)}"
        ) from exc
    function: Any = module
    for part in attribute.split("."):
        if not hasattr(function, part):
            where = getattr(module, "__file__", None) or module_name
            raise RetrieverError(f"--retriever {spec!r}: {where} has no attribute {part!r}")
        function = getattr(function, part)
    if not callable(function):
        raise RetrieverError(
            f"--retriever {spec!r} is a {type(function).__name__}, not a callable factory"
        )
    _check_signature(spec, function)
    chosen = framework or _framework_of(spec, function)
    if not chosen.installed():
        raise RetrieverError(
            f"--retriever {spec!r} builds a {chosen.value} retriever, but {chosen.package} is not"
            " installed",
            hint="install the framework your factory uses into this environment",
        )
    return Factory(spec, function, chosen)


class CustomSystem:
    """The retriever a `Factory` builds over the pool's corpus, as an eval retrieval system.

    Args:
        factory: the resolved factory.
        k: passed to the factory: how many results each query should return.
        name: the system's name in reports and file names; default the factory's name.
    """

    def __init__(self, factory: Factory, *, k: int, name: str | None = None) -> None:
        self.factory = factory
        self.k = k
        self._name = name or factory.attribute
        if not _NAME.fullmatch(self._name):
            raise EvalSettingError(
                f"system name {self._name!r}: use letters, digits, '.', '_' and '-' only"
                " (it names the results files)",
                hint="give --name NAME",
            )
        self._prepared: tuple[Pool, Any] | None = None
        self._corpus_ids: dict[str, str] = {}  # opaque document id -> pool corpus id
        self.shortfall: tuple[str, int, int] | None = None
        """(query id, snippets got, snippets asked for) of the first query that got fewer than it
        asked for, if any: exec@k and the gate saw only those. A retriever that ignores ``k``
        keeps its own default (LangChain's ``as_retriever()``: 4)."""

    @property
    def name(self) -> str:
        return self._name

    def queries(self, pool: Pool) -> list[Query]:
        return list(pool.queries)

    def prepare(self, pool: Pool, on_progress: IndexProgress | None = None) -> None:
        """Call the factory with the pool's corpus as documents and check what it returns."""
        self._corpus_ids = {opaque_document_id(pool, cid): cid for cid in pool.corpus}
        if len(self._corpus_ids) != len(pool.corpus):
            raise EvalSettingError(f"two corpus ids of pool {pool.name!r} hash to one document id")
        documents = _documents(self.factory.framework, pool, sorted(self._corpus_ids))
        if on_progress is not None:
            on_progress(0, len(documents))
        try:
            retriever = self.factory.function(documents, self.k)
        except Exception as exc:  # the user's factory: its exception is the message
            raise RetrieverError(
                f"--retriever {self.factory.spec!r} raised {_describe(exc)} while building the"
                f" retriever over {len(documents)} documents"
            ) from exc
        expected = _retriever_class(self.factory.framework)
        if not isinstance(retriever, expected):
            kind = type(retriever)
            raise RetrieverError(
                f"--retriever {self.factory.spec!r} returned a"
                f" {kind.__module__}.{kind.__qualname__}, not a"
                f" {self.factory.framework.retriever_class}",
                hint="return the retriever itself (for a vector store: store.as_retriever(...))",
            )
        self._prepared = (pool, retriever)
        if on_progress is not None:
            on_progress(len(documents), len(documents))

    def retrieve(self, pool: Pool, query: Query, depth: int) -> Retrieval:
        if self._prepared is None or self._prepared[0] is not pool:
            raise RuntimeError(f"{self.name}: prepare(pool) was not called for pool {pool.name!r}")
        retriever = self._prepared[1]
        try:
            hits = _ask(self.factory.framework, retriever, query.query)
        except Exception as exc:  # the user's retriever (and its embedding service)
            raise RetrieverError(
                f"the retriever of --retriever {self.factory.spec!r} raised {_describe(exc)} on"
                f" query {query.query_id!r}"
            ) from exc
        ranking = self._ranking(pool, query, hits, depth)
        wanted = min(depth, len(pool.corpus))
        if self.shortfall is None and len(ranking) < wanted:
            self.shortfall = (query.query_id, len(ranking), wanted)
        return Retrieval(ranking)

    def _ranking(
        self, pool: Pool, query: Query, hits: Sequence[tuple[object, float]], depth: int
    ) -> tuple[Retrieved, ...]:
        ranking: list[Retrieved] = []
        seen: set[str] = set()
        for rank, (metadata, score) in enumerate(hits, start=1):
            if len(ranking) == depth:
                break
            where = (
                f"result {rank} of --retriever {self.factory.spec!r} for query {query.query_id!r}"
            )
            document_id = metadata.get(CORPUS_ID) if isinstance(metadata, Mapping) else None
            if not isinstance(document_id, str):
                keys = sorted(map(str, metadata)) if isinstance(metadata, Mapping) else []
                raise RetrieverError(
                    f"{where} has no metadata {CORPUS_ID!r} (its metadata keys: {keys[:8]})",
                    hint="keep each document's metadata in the store: it maps results back to"
                    " the pool",
                )
            corpus_id = self._corpus_ids.get(document_id)
            if corpus_id is None:
                raise RetrieverError(
                    f"{where} names corpus id {document_id!r}, which is not a document of pool"
                    f" {pool.name!r}",
                    hint="build the retriever from the documents the factory is given, not from"
                    " another index",
                )
            if corpus_id not in seen:
                seen.add(corpus_id)
                ranking.append(Retrieved(corpus_id, score))
        return tuple(ranking)


def _dotted(text: str) -> bool:
    return bool(text) and all(part.isidentifier() for part in text.split("."))


def _describe(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _check_signature(spec: str, function: Callable[..., Any]) -> None:
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):  # no signature to read (some builtins): the call will tell
        return
    try:
        signature.bind([], 1)
    except TypeError:
        raise RetrieverError(
            f"--retriever {spec!r} cannot be called as factory(documents, k); its signature is"
            f" {signature}",
        ) from None


def _framework_of(spec: str, function: Callable[..., Any]) -> Framework:
    """The framework the factory's return or first-parameter annotation names, else the one
    installed."""
    try:
        hints = typing.get_type_hints(function)
    except Exception:  # annotations naming what cannot be imported here tell us nothing
        hints = {}
    try:
        first = next(iter(inspect.signature(function).parameters), None)
    except (TypeError, ValueError):
        first = None
    found: set[Framework] = set()
    for key in ("return", first):
        if key is not None and key in hints:
            found |= _frameworks_in(hints[key])
    if len(found) == 1:
        return found.pop()
    installed = [framework for framework in Framework if framework.installed()]
    if not found and len(installed) == 1:
        return installed[0]
    raise RetrieverError(
        f"--retriever {spec!r}: cannot tell whether it builds a LangChain or a LlamaIndex"
        " retriever",
        hint="annotate its return type (-> BaseRetriever of langchain_core.retrievers or"
        " llama_index.core.retrievers), or give --framework langchain|llamaindex",
    )


def _frameworks_in(annotation: object) -> set[Framework]:
    """Frameworks whose classes an annotation names (``list[TextNode]`` -> LlamaIndex)."""
    found: set[Framework] = set()
    root = str(getattr(annotation, "__module__", "")).split(".")[0]
    if isinstance(annotation, type) and root == "llama_index":
        found.add(Framework.LLAMAINDEX)
    elif isinstance(annotation, type) and root.startswith("langchain"):
        found.add(Framework.LANGCHAIN)
    for argument in typing.get_args(annotation):
        found |= _frameworks_in(argument)
    return found


def _retriever_class(framework: Framework) -> type[Any]:
    if framework is Framework.LANGCHAIN:
        from langchain_core.retrievers import BaseRetriever as LangChainRetriever

        return LangChainRetriever
    from llama_index.core.retrievers import BaseRetriever as LlamaIndexRetriever

    return LlamaIndexRetriever


def _documents(framework: Framework, pool: Pool, document_ids: Sequence[str]) -> list[Any]:
    """The pool's corpus as the framework's documents in the order of ``document_ids`` (opaque
    ids of `opaque_document_id`), each knowing only its opaque id."""
    codes = {opaque_document_id(pool, cid): entry.code for cid, entry in pool.corpus.items()}
    if framework is Framework.LANGCHAIN:
        from langchain_core.documents import Document

        return [
            Document(id=did, page_content=codes[did], metadata={CORPUS_ID: did})
            for did in document_ids
        ]
    from llama_index.core.schema import TextNode

    return [
        TextNode(
            id_=did,
            text=codes[did],
            metadata={CORPUS_ID: did},
            excluded_embed_metadata_keys=[CORPUS_ID],
            excluded_llm_metadata_keys=[CORPUS_ID],
        )
        for did in document_ids
    ]


def _ask(framework: Framework, retriever: Any, text: str) -> list[tuple[object, float]]:
    """(metadata, score) of each result, best first."""
    if framework is Framework.LANGCHAIN:
        hits: list[tuple[object, float]] = []
        for document in retriever.invoke(text):
            metadata = getattr(document, "metadata", None)
            scores = (
                [metadata.get(key) for key in _SCORE_KEYS] if isinstance(metadata, Mapping) else []
            )
            hits.append((metadata, _score(*scores)))
        return hits
    return [
        (getattr(getattr(hit, "node", None), "metadata", None), _score(getattr(hit, "score", None)))
        for hit in retriever.retrieve(text)
    ]


def _score(*values: object) -> float:
    """The first finite number among ``values`` (a retriever's own score), else 0.0."""
    for value in values:
        if isinstance(value, bool):  # a flag, not a score (bool is an int)
            continue
        if isinstance(value, numbers.Real) and math.isfinite(float(value)):
            return float(value)
    return 0.0
