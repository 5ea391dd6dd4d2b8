"""`gated_search`: retrieve from a `CodeIndex`, resolve each candidate's spec, gate them.

The one implementation of a search behind the gate: ``guardrail search`` runs it in its own
process, ``guardrail serve`` for ``POST /v1/search`` (so both hand over the same results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from guardrail.gate import GateResult, Policy
from guardrail.sources import SpecSource, resolve
from guardrail.spec import Spec

if TYPE_CHECKING:  # chromadb stays out of importing this module
    from guardrail.gatelike import GateLike
    from guardrail.index import CodeIndex

__all__ = ["gated_search"]


def gated_search(
    index: CodeIndex,
    gate: GateLike,
    query: str,
    spec: Spec | None,
    *,
    fetch_k: int,
    policy: Policy | str | None = None,
    ask: bool | None = None,
) -> tuple[GateResult, list[SpecSource]]:
    """The gate's result for the ``fetch_k`` snippets closest to ``query``, and where each
    one's spec came from (``spec`` for all when given, else its stored tests; `resolve`).

    Raises:
        SpecError: tests stored with a snippet that cannot be used.
        SandboxError: the sandbox cannot judge.
    """
    candidates = index.search(query, k=fetch_k)
    resolved = [resolve(candidate, spec) for candidate in candidates]
    result = gate.gate(candidates, [r.spec for r in resolved], policy=policy, ask=ask)
    return result, [r.source for r in resolved]
