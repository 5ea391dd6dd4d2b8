"""The service's request and response bodies, shared by the server and `RemoteGate`.

They are built from the library's own pydantic models (`Spec`, `Verdict`, `Candidate`,
`GateResult`, `Probe`, `Observation`), so a verdict crosses the wire as exactly the JSON
``Verdict.model_dump_json`` gives, and validating it again on the client changes nothing (every
`Verdict` validator is idempotent). Every request model forbids unknown fields: a misspelt field
is a 422, never silently ignored.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from guardrail.gate import Candidate, GateResult, Policy
from guardrail.probes import Probe
from guardrail.sources import SpecSource
from guardrail.spec import Spec
from guardrail.verdict import Observation, Verdict

__all__ = [
    "API_PREFIX",
    "ErrorBody",
    "ErrorDetail",
    "GateRequest",
    "HealthResponse",
    "ObserveRequest",
    "ObserveResponse",
    "PoolFigures",
    "QueueFigures",
    "SearchRequest",
    "SearchResponse",
    "VerifyRequest",
    "VerifyResponse",
]

API_PREFIX = "/v1"

# Chroma's own rule (3-512 characters of [a-zA-Z0-9._-], alphanumeric at both ends): a collection
# is named, never a path.
_COLLECTION = re.compile(r"[a-zA-Z0-9](?:[a-zA-Z0-9._-]{1,510})[a-zA-Z0-9]")

Metadata = dict[str, Any] | None
SpecArgument = Spec | list[Spec | None] | None


class _Request(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class VerifyRequest(_Request):
    """`Gate.verify`'s arguments: codes, one spec for all or one each, one metadata each."""

    codes: list[str]
    spec: SpecArgument = Field(description="one Spec for every code, one per code, or null")
    metadata: list[Metadata] | None = None


class VerifyResponse(BaseModel):
    verdicts: list[Verdict]


class GateRequest(_Request):
    """`Gate.gate`'s arguments: candidates in retrieval order, their spec(s), policy and ask."""

    candidates: list[Candidate]
    spec: SpecArgument = None
    policy: Policy | None = None
    ask: bool | None = None


class ObserveRequest(_Request):
    """`Gate.observe`'s arguments: what each code returns or raises on each probe."""

    codes: list[str]
    spec: Spec
    probes: list[Probe]
    metadata: list[Metadata] | None = None


class ObserveResponse(BaseModel):
    observations: list[list[Observation]]


class SearchRequest(_Request):
    """Retrieve ``fetch_k`` snippets of a collection of the server's index, gate them."""

    collection: str = "guardrail"
    query: str = Field(min_length=1)
    spec: Spec | None = Field(
        default=None, description="tests for every candidate; null: each snippet's stored tests"
    )
    fetch_k: int = Field(default=20, ge=1)
    policy: Policy | None = None
    ask: bool | None = None

    @field_validator("collection")
    @classmethod
    def _a_name(cls, value: str) -> str:
        if not _COLLECTION.fullmatch(value):
            raise ValueError(
                f"collection {value[:80]!r} is not a collection name (3-512 characters of"
                " [a-zA-Z0-9._-], alphanumeric at both ends); the server's index is its own"
            )
        return value


class SearchResponse(BaseModel):
    """What the gate decided for the retrieved snippets, and where each one's tests came from
    (``spec_sources[i]`` for ``result.judged[i]``)."""

    collection: str
    result: GateResult
    spec_sources: list[SpecSource]


class PoolFigures(BaseModel):
    size: int = Field(description="containers run in parallel (the pool size setting)")
    live: int | None = Field(default=None, description="containers that exist now")
    containers_started: int | None = None
    jobs_run: int | None = None
    faults: int | None = None


class NodeFigures(BaseModel):
    """One node of a Ray cluster (``--backend ray``): where its judge runs and its pool."""

    node: str = Field(description="the node's address and Ray node id prefix")
    usable: bool = Field(description="gets work now (answered with the cluster's identity)")
    problem: str = ""
    host: str | None = None
    pid: int | None = Field(default=None, description="the judge actor's process on the node")
    docker_host: str | None = None
    pool_size: int | None = None
    containers_started: int | None = None
    jobs_run: int | None = None
    faults: int | None = None
    queued_jobs: int = 0


class QueueFigures(BaseModel):
    running: int
    waiting: int
    concurrency: int = Field(description="requests run at once")
    capacity: int = Field(description="requests that may wait; beyond it: 429")


class HealthResponse(BaseModel):
    status: Literal["ok", "unavailable", "draining"]
    engine: str = Field(description="'ok', or why the sandbox cannot judge now")
    image: str | None = None
    runtime: str | None = None
    identity: str | None = Field(default=None, description="the verdict-cache identity")
    pool: PoolFigures
    nodes: list[NodeFigures] | None = Field(
        default=None, description="per node, with --backend ray; the pool figures are their sums"
    )
    queue: QueueFigures
    version: str


class ErrorDetail(BaseModel):
    kind: str = Field(description="the error's class name, e.g. SpecError, QueueFull")
    message: str
    hint: str = ""


class ErrorBody(BaseModel):
    error: ErrorDetail
