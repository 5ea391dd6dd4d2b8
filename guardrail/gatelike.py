"""`GateLike`: the interface of `Gate` that its users rely on, so a `RemoteGate` (the client of
``guardrail serve``) can stand wherever a `Gate` does.

The LangChain and LlamaIndex integrations, `guardrail.searching` and the CLI type their gate as
`GateLike`; `Gate` and `guardrail.client.RemoteGate` both satisfy it (checked at run time by
pydantic fields too: it is ``runtime_checkable``, which checks the methods exist).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from guardrail.gate import Candidate, GateResult, Policy, SpecArg
from guardrail.probes import Probe
from guardrail.spec import Spec
from guardrail.verdict import Observation, Verdict

__all__ = ["GateLike"]


@runtime_checkable
class GateLike(Protocol):
    """Verify candidates, gate them by a policy, observe them on probes; sync and async."""

    def verify(
        self,
        codes: Sequence[str],
        spec: SpecArg,
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[Verdict]: ...

    async def averify(
        self,
        codes: Sequence[str],
        spec: SpecArg,
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[Verdict]: ...

    def observe(
        self,
        codes: Sequence[str],
        spec: Spec,
        probes: Sequence[Probe],
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[list[Observation]]: ...

    async def aobserve(
        self,
        codes: Sequence[str],
        spec: Spec,
        probes: Sequence[Probe],
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[list[Observation]]: ...

    def gate(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        *,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> GateResult: ...

    async def agate(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        *,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> GateResult: ...

    def close(self) -> None: ...
