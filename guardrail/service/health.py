"""What ``GET /v1/health`` reports: can the sandbox judge now, with which image and runtime, and
the pool's and the queue's figures.

The engine is asked each time (a Docker ping, bounded by `PROBE_TIMEOUT_S`), so a lost engine
shows at once and a returned one as soon as it answers; nothing is restarted for it.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from guardrail.errors import SandboxError
from guardrail.gate import Gate
from guardrail.sandbox.base import Sandbox
from guardrail.service.admission import Admission
from guardrail.service.interruptible import InterruptibleSandbox
from guardrail.service.models import HealthResponse, NodeFigures, PoolFigures, QueueFigures

__all__ = ["PROBE_TIMEOUT_S", "health", "judging_sandbox", "pool_figures"]

PROBE_TIMEOUT_S = 5.0


def judging_sandbox(gate: Gate) -> Sandbox:
    """The sandbox that really judges (below the service's `InterruptibleSandbox`)."""
    sandbox = gate.sandbox
    return sandbox.inner if isinstance(sandbox, InterruptibleSandbox) else sandbox


def pool_figures(sandbox: Sandbox) -> PoolFigures:
    stats: Any = getattr(sandbox, "stats", None)
    pool: Any = getattr(sandbox, "pool", None)
    return PoolFigures(
        size=int(getattr(sandbox, "pool_size", 1)),
        live=getattr(pool, "live", None),
        containers_started=getattr(stats, "containers_started", None),
        jobs_run=getattr(stats, "jobs_run", None),
        faults=getattr(stats, "faults", None),
    )


def _sums(nodes: list[NodeFigures]) -> PoolFigures:
    def total(name: str) -> int:
        return sum(int(getattr(node, name) or 0) for node in nodes)

    return PoolFigures(
        size=total("pool_size"),
        containers_started=total("containers_started"),
        jobs_run=total("jobs_run"),
        faults=total("faults"),
    )


def _probe(sandbox: Sandbox) -> dict[str, Any]:
    """Ask the engine, or every node's actor (blocking). Raises what the engine's client raises,
    or `SandboxError` when no node of a Ray cluster can judge."""
    from guardrail.sandbox.docker import DockerSandbox
    from guardrail.sandbox.raysandbox import RaySandbox

    if isinstance(sandbox, RaySandbox):
        nodes = [NodeFigures.model_validate(entry) for entry in sandbox.nodes()]
        if not any(node.usable for node in nodes):
            raise SandboxError("no node of the Ray cluster can judge now")
        return {"image": None, "runtime": None, "identity": sandbox.identity, "nodes": nodes}
    if isinstance(sandbox, DockerSandbox):
        sandbox.client.ping()
        return {
            "image": sandbox.image_id,
            "runtime": sandbox.runtime_name,
            "identity": sandbox.identity,
        }
    return {"image": None, "runtime": None, "identity": sandbox.identity}


async def health(gate: Gate, admission: Admission, version: str) -> HealthResponse:
    sandbox = judging_sandbox(gate)
    found: dict[str, Any] = {"image": None, "runtime": None, "identity": None}
    try:
        found = await asyncio.wait_for(asyncio.to_thread(_probe, sandbox), PROBE_TIMEOUT_S)
        engine = "ok"
    except TimeoutError:
        engine = f"the engine did not answer within {PROBE_TIMEOUT_S:g} s"
    except Exception as exc:  # any failure to reach the engine is reported, never raised
        engine = f"{type(exc).__name__}: {exc}"[:500]
    status: Literal["ok", "unavailable", "draining"] = (
        "draining" if admission.draining else "ok" if engine == "ok" else "unavailable"
    )
    nodes: list[NodeFigures] | None = found.pop("nodes", None)
    return HealthResponse(
        status=status,
        engine=engine,
        pool=_sums(nodes) if nodes is not None else pool_figures(sandbox),
        nodes=nodes,
        queue=QueueFigures(
            running=admission.running,
            waiting=admission.waiting,
            concurrency=admission.concurrency,
            capacity=admission.capacity,
        ),
        version=version,
        **found,
    )
