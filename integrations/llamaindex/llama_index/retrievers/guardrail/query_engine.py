"""`GuardedQueryEngine`: a `RetrieverQueryEngine` that says so when nothing was verified.

Under the ``filter``, ``abstain`` and ``agree`` policies a gated retriever (or postprocessor) may
keep no node, and LlamaIndex's synthesizers then answer "Empty Response", which reads like a
failure of the engine rather than a verdict on the code. This engine answers with an explicit
sentence instead (`nothing_verified`: when candidates ran and failed, how many, the first failing
test and what each returned; when they passed but disagree, the gate's question), without
calling the LLM; when nodes are kept it is a plain
`RetrieverQueryEngine` (each node's text carries its verdict line)::

    engine = GuardedQueryEngine.from_args(GuardedRetriever(index, gate=Gate(), policy="filter"))
    engine.query(TestedQueryBundle("leap year check", tests=["assert is_leap(2000)"]))
"""

from __future__ import annotations

from collections.abc import Generator, Mapping, Sequence
from typing import Any

from llama_index.core.base.response.schema import RESPONSE_TYPE, Response, StreamingResponse
from llama_index.core.callbacks import CBEventType, EventPayload

# Core's own path to it (it re-exports the function without listing it for type checkers).
from llama_index.core.instrumentation import get_dispatcher  # type: ignore[attr-defined]
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.schema import NodeWithScore, QueryBundle

from guardrail.integration import METADATA_KEY, collecting_dropped
from guardrail.safetext import one_line
from guardrail.verdict_text import nothing_handed_over
from llama_index.retrievers.guardrail.base import TestedQueryBundle

__all__ = ["GuardedQueryEngine", "nothing_verified"]

dispatcher = get_dispatcher(__name__)


def nothing_verified(query_bundle: QueryBundle, dropped: Sequence[NodeWithScore] = ()) -> str:
    """The answer when the gate kept no code for ``query_bundle``; ``dropped`` are the nodes
    it did not hand over although they ran (with their verdicts): when they failed, how many,
    the first failing test and what each returned there; when they passed but disagree (the
    ``agree`` policy), the gate's question (`guardrail.verdict_text.nothing_handed_over`)."""
    quoted = one_line(repr(query_bundle.query_str))
    if dropped:
        return nothing_handed_over(
            quoted,
            [(_verdict(node), node.node.metadata) for node in dropped],
            yours="the tests",
            again="query again",
        )
    tested = isinstance(query_bundle, TestedQueryBundle) and bool(query_bundle.tests)
    advice = (
        "write the code and test it"
        if tested
        else "give tests with the query (TestedQueryBundle(query, tests=[...])) or write the code"
        " and test it"
    )
    return (
        f"Nothing verified for {quoted}: no retrieved code ran"
        f" and passed its tests, so no code is given. Do not answer with unverified code; {advice}."
    )


class GuardedQueryEngine(RetrieverQueryEngine):
    """`RetrieverQueryEngine` whose answer, when no node is kept, is `nothing_verified`.

    Build it as any retriever query engine: ``GuardedQueryEngine.from_args(retriever, ...)`` or
    ``GuardedQueryEngine(retriever, response_synthesizer, ...)``.
    """

    @dispatcher.span
    def _query(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        with self.callback_manager.event(
            CBEventType.QUERY, payload={EventPayload.QUERY_STR: query_bundle.query_str}
        ) as query_event:
            with collecting_dropped() as dropped:
                nodes = self.retrieve(query_bundle)
            response = (
                self._response_synthesizer.synthesize(query=query_bundle, nodes=nodes)
                if nodes
                else self._nothing(query_bundle, dropped)
            )
            query_event.on_end(payload={EventPayload.RESPONSE: response})
        return response

    @dispatcher.span
    async def _aquery(self, query_bundle: QueryBundle) -> RESPONSE_TYPE:
        with self.callback_manager.event(
            CBEventType.QUERY, payload={EventPayload.QUERY_STR: query_bundle.query_str}
        ) as query_event:
            with collecting_dropped() as dropped:
                nodes = await self.aretrieve(query_bundle)
            response = (
                await self._response_synthesizer.asynthesize(query=query_bundle, nodes=nodes)
                if nodes
                else self._nothing(query_bundle, dropped)
            )
            query_event.on_end(payload={EventPayload.RESPONSE: response})
        return response

    def _nothing(self, query_bundle: QueryBundle, dropped: list[NodeWithScore]) -> RESPONSE_TYPE:
        # The nodes that failed are the response's source nodes (with their verdicts), so a
        # program sees what ran; the text never offers their code.
        message = nothing_verified(query_bundle, dropped)
        # A streaming synthesizer's caller reads response_gen: give it the sentence that way.
        if getattr(self._response_synthesizer, "_streaming", False):
            return StreamingResponse(response_gen=_once(message), source_nodes=dropped)
        return Response(message, source_nodes=dropped)


def _verdict(node: NodeWithScore) -> Mapping[str, Any]:
    verdict = node.node.metadata.get(METADATA_KEY)
    return verdict if isinstance(verdict, Mapping) else {}


def _once(text: str) -> Generator[str, None, None]:
    yield text
