"""`GuardedRetriever`: any LlamaIndex retriever (or a `CodeIndex`) behind the execution gate.

The base retriever's top ``fetch_k`` nodes are run against tests in the sandbox; the policy puts
verified code first and drops code that failed; at most ``k`` nodes come back, each with its
verdict under ``node.metadata["guardrail"]``. Swapping it in is one line::

    retriever = index.as_retriever(similarity_top_k=10)                   # before
    retriever = GuardedRetriever(index, fetch_k=20, gate=Gate())          # after

LlamaIndex retrievers take no per-call arguments, so tests for one query travel in a
`TestedQueryBundle` (``retriever.retrieve(TestedQueryBundle(query, tests=[...]))``, also through
``RetrieverQueryEngine.query``), otherwise come from the ``tests`` argument, a ``test_provider``
callable, or the tests stored in each node's metadata.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from llama_index.core import VectorStoreIndex
from llama_index.core.base.base_retriever import BaseRetriever
from llama_index.core.callbacks import CallbackManager
from llama_index.core.schema import NodeWithScore, QueryBundle

from guardrail.gate import Gate, GateResult, Policy
from guardrail.gatelike import GateLike
from guardrail.index import CodeIndex
from guardrail.integration import GatePlan, Tests, check_tests
from guardrail.questions import Question
from guardrail.spec import Spec
from llama_index.retrievers.guardrail._gating import (
    GateSettings,
    TestProvider,
    candidate_node,
    gated_nodes,
)

__all__ = ["GuardedRetriever", "TestedQueryBundle"]


@dataclass
class TestedQueryBundle(QueryBundle):
    """A `QueryBundle` carrying the tests the retrieved code must pass (retrieve-then-verify).

    Accepted wherever a `QueryBundle` is: ``retriever.retrieve(...)``, ``aretrieve``,
    ``query_engine.query(...)``; the base retriever sees an ordinary query. ``tests`` is a list of
    test statements or a `Spec` (for setup code or an explicit entry point); it overrides the
    retriever's own ``tests``.
    """

    __test__ = False  # not a pytest class

    tests: Sequence[str] | Spec | None = field(default=None, kw_only=True)

    def __post_init__(self) -> None:
        check_tests(self.tests)


class GuardedRetriever(BaseRetriever):
    """A retriever that hands over verified code first and never code that failed its tests.

    Args:
        retriever: where candidates come from: a `VectorStoreIndex` (for example
            ``VectorStoreIndex.from_vector_store(ChromaVectorStore(...))``, asked for ``fetch_k``
            results), any LlamaIndex `BaseRetriever`, or a guardrail `CodeIndex`.
        gate: the core `Gate` (sandbox, verdict cache, default policy). Default: ``Gate()``, a
            Docker sandbox with the user verdict cache.
        policy: ``rerank`` (verified, then unverifiable), ``filter`` (verified only),
            ``abstain`` (nothing unless something verified) or ``agree`` (as ``abstain``, and
            nothing when the verified disagree on an input); default: the gate's policy.
        fetch_k: how many of the top results are verified. A `BaseRetriever` decides how many
            it returns (``similarity_top_k``) and its first ``fetch_k`` are verified: configure
            it to return at least that many.
        k: how many nodes are returned at most.
        tests: tests every candidate must pass (statements or a `Spec`), unless the query brings
            its own in a `TestedQueryBundle`.
        test_provider: ``(query, node) -> tests | Spec | None``, consulted when neither the query
            nor ``tests`` give tests.
        entry_point: the function name the tests call; inferred from the tests when omitted.
        setup: code the judge runs before the tests (imports, helpers).
        include_paths: keep absolute host paths (``root``, an absolute ``file``) in the nodes'
            metadata; by default ``root`` is left out and ``file`` is relative to it.
        callback_manager: LlamaIndex callbacks, as for any retriever.
        verbose: LlamaIndex's verbose flag, as for any retriever.

    Raises:
        TypeError: an unknown argument (LlamaIndex would ignore it), a base that is not a
            retriever, or tests given as one string.
        ValueError: ``k`` or ``fetch_k`` below 1, or ``fetch_k`` below ``k``; an unknown policy.
    """

    def __init__(
        self,
        retriever: BaseRetriever | VectorStoreIndex | CodeIndex,
        *,
        gate: GateLike | None = None,
        policy: Policy | str | None = None,
        fetch_k: int = 20,
        k: int = 4,
        tests: Tests | None = None,
        test_provider: TestProvider | None = None,
        entry_point: str | None = None,
        setup: str = "",
        include_paths: bool = False,
        callback_manager: CallbackManager | None = None,
        verbose: bool = False,
    ) -> None:
        if k < 1 or fetch_k < k:
            raise ValueError(
                f"need 1 <= k <= fetch_k, got k={k}, fetch_k={fetch_k}: the gate verifies the "
                "top fetch_k results and returns at most k of them"
            )
        if isinstance(retriever, VectorStoreIndex):
            retriever = retriever.as_retriever(similarity_top_k=fetch_k)
        if not isinstance(retriever, BaseRetriever | CodeIndex):
            raise TypeError(
                "retriever must be a VectorStoreIndex, a LlamaIndex BaseRetriever or a guardrail "
                f"CodeIndex, got {type(retriever).__name__}; for other indexes pass "
                "index.as_retriever()"
            )
        chosen = None if policy is None else Policy(policy)
        check_tests(tests)  # before a default Gate opens a sandbox
        self.settings = GateSettings(
            gate=Gate() if gate is None else gate,
            policy=chosen,
            tests=tests,
            test_provider=test_provider,
            entry_point=entry_point,
            setup=setup,
            include_paths=include_paths,
        )
        self.retriever: BaseRetriever | CodeIndex = retriever
        self.fetch_k = fetch_k
        self.k = k
        self.last_question: Question | None = None
        """The gate's question from the latest retrieval (None: it asked nothing), also on
        every node it returned as ``metadata["guardrail_question"]``. With concurrent calls on
        one retriever, read the nodes' metadata instead: this is whichever finished last."""
        super().__init__(callback_manager=callback_manager, verbose=verbose)

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        plan = self._plan(query_bundle, self._fetch(query_bundle))
        result = self.settings.gate.gate(plan.candidates, plan.specs, policy=self.settings.policy)
        return self._handed_over(plan, result)

    async def _aretrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        plan = self._plan(query_bundle, await self._afetch(query_bundle))
        result = await self.settings.gate.agate(
            plan.candidates, plan.specs, policy=self.settings.policy
        )
        return self._handed_over(plan, result)

    def _handed_over(
        self, plan: GatePlan[NodeWithScore], result: GateResult
    ) -> list[NodeWithScore]:
        self.last_question = result.question
        return gated_nodes(plan, result, self.k, include_paths=self.settings.include_paths)

    def _plan(
        self, query_bundle: QueryBundle, nodes: Sequence[NodeWithScore]
    ) -> GatePlan[NodeWithScore]:
        tests = query_bundle.tests if isinstance(query_bundle, TestedQueryBundle) else None
        return self.settings.plan(query_bundle.query_str, nodes, tests)

    def _fetch(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if isinstance(self.retriever, CodeIndex):
            hits = self.retriever.search(query_bundle.query_str, k=self.fetch_k)
            return [candidate_node(hit) for hit in hits]
        return self.retriever.retrieve(query_bundle)[: self.fetch_k]

    async def _afetch(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        if isinstance(self.retriever, CodeIndex):
            hits = await self.retriever.asearch(query_bundle.query_str, k=self.fetch_k)
            return [candidate_node(hit) for hit in hits]
        return (await self.retriever.aretrieve(query_bundle))[: self.fetch_k]
