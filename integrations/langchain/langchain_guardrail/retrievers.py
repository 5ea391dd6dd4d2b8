"""`GuardedRetriever`: any code retriever, each result run against tests before it is returned.

Swapping it in is one line::

    retriever = GuardedRetriever(base=old_retriever, gate=Gate())

Each returned Document carries its verdict under ``metadata["guardrail"]`` (see
`langchain_guardrail.verdict_of`). Verified code comes first; code that failed its tests is never
returned; code with no tests to run is returned after verified code under the ``rerank`` policy,
not at all under ``filter``, and ``abstain`` returns nothing when nothing verified; ``agree``
returns nothing either when the verified results disagree on an input the gate tried.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
    Callbacks,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langchain_core.vectorstores import VectorStoreRetriever
from pydantic import ConfigDict, Field, model_validator

from guardrail.gate import Candidate, Policy
from guardrail.index import CodeIndex
from guardrail.integration import Tests, check_tests
from langchain_guardrail._gating import GateSettings, gated_documents

__all__ = ["DocumentRetriever", "GuardedRetriever"]

_CALL_OPTIONS = ("tests", "k", "fetch_k", "policy")


@runtime_checkable
class DocumentRetriever(Protocol):
    """Anything with LangChain's retriever calls: a `BaseRetriever`, or any Runnable that maps a
    query string to a list of Documents whose page content is code."""

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]: ...

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]: ...


@dataclass(frozen=True)
class _Call:
    """The options of one call: the fields' values overridden by ``invoke`` keywords."""

    tests: Tests | None
    k: int
    fetch_k: int
    policy: Policy | None


class GuardedRetriever(BaseRetriever, GateSettings):
    """A retriever that verifies what ``base`` retrieves by running it against tests.

    It asks ``base`` for ``fetch_k`` candidates, runs them concurrently in the gate's sandbox,
    and returns at most ``k`` Documents in the policy's order, each with its verdict under
    ``metadata["guardrail"]``. Tests come from ``invoke(query, tests=[...])``, else the
    ``tests`` field, else ``test_provider(query, document)``, else the tests stored in the
    document's metadata (``tests``, as `CodeIndex` stores them).

    ``invoke`` also takes ``k``, ``fetch_k`` and ``policy`` for one call. Unknown keywords and
    unknown constructor arguments raise instead of being ignored.

    Fail closed: when the sandbox cannot run, the call raises `guardrail.errors.SandboxError`;
    nothing is ever labelled ``verified`` without having run and passed.

    Example:
        .. code-block:: python

            from guardrail.gate import Gate
            from langchain_guardrail import GuardedRetriever

            retriever = GuardedRetriever(base=store.as_retriever(), gate=Gate())
            docs = retriever.invoke("parse an ISO date", tests=["assert parse('2024-01-02') ..."])
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    base: CodeIndex | DocumentRetriever
    """Where candidates come from: a `CodeIndex`, a LangChain retriever, or any Runnable that
    returns Documents. A `VectorStoreRetriever` is asked for ``fetch_k`` results; other
    retrievers return what they are configured to and the first ``fetch_k`` are verified."""
    k: int = Field(default=4, ge=1)
    """How many Documents to return at most."""
    fetch_k: int = Field(default=20, ge=1)
    """How many candidates to retrieve and verify."""

    @model_validator(mode="after")
    def _fetch_at_least_k(self) -> GuardedRetriever:
        if self.fetch_k < self.k:
            raise ValueError(
                f"fetch_k={self.fetch_k} is smaller than k={self.k}: the gate can only return "
                "what it verified; set fetch_k >= k"
            )
        return self

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        call = self._call(kwargs)
        retrieved = self._retrieve(query, call.fetch_k, run_manager.get_child())
        plan = self.plan(query, retrieved, call.tests)
        result = self.gate.gate(plan.candidates, plan.specs, policy=call.policy)
        return gated_documents(plan, result, call.k, include_paths=self.include_paths)

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        call = self._call(kwargs)
        retrieved = await self._aretrieve(query, call.fetch_k, run_manager.get_child())
        plan = self.plan(query, retrieved, call.tests)
        result = await self.gate.agate(plan.candidates, plan.specs, policy=call.policy)
        return gated_documents(plan, result, call.k, include_paths=self.include_paths)

    def _call(self, kwargs: dict[str, Any]) -> _Call:
        unknown = sorted(set(kwargs) - set(_CALL_OPTIONS))
        if unknown:
            raise TypeError(
                f"GuardedRetriever got unexpected keyword argument(s) {unknown}; "
                f"it accepts {list(_CALL_OPTIONS)}"
            )
        k = kwargs.get("k", self.k)
        if not isinstance(k, int) or k < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        fetch_k = kwargs.get("fetch_k", self.fetch_k)
        if not isinstance(fetch_k, int) or fetch_k < 1:
            raise ValueError(f"fetch_k must be a positive integer, got {fetch_k!r}")
        policy = kwargs.get("policy", self.policy)
        return _Call(
            tests=check_tests(kwargs.get("tests")),
            k=k,
            # Asking for more than fetch_k results fetches more rather than returning fewer.
            fetch_k=max(fetch_k, k),
            policy=None if policy is None else Policy(policy),
        )

    def _retrieve(
        self, query: str, fetch_k: int, callbacks: Callbacks
    ) -> Sequence[Document] | Sequence[Candidate]:
        if isinstance(self.base, CodeIndex):
            return self.base.search(query, k=fetch_k)
        config: RunnableConfig = {"callbacks": callbacks}
        return self.base.invoke(query, config, **self._base_kwargs(fetch_k))[:fetch_k]

    async def _aretrieve(
        self, query: str, fetch_k: int, callbacks: Callbacks
    ) -> Sequence[Document] | Sequence[Candidate]:
        if isinstance(self.base, CodeIndex):
            return await self.base.asearch(query, k=fetch_k)
        config: RunnableConfig = {"callbacks": callbacks}
        return (await self.base.ainvoke(query, config, **self._base_kwargs(fetch_k)))[:fetch_k]

    def _base_kwargs(self, fetch_k: int) -> dict[str, Any]:
        # Only a vector store retriever documents ``k`` as a search keyword; other retrievers
        # may reject or silently drop unknown keywords, so they get none.
        return {"k": fetch_k} if isinstance(self.base, VectorStoreRetriever) else {}
