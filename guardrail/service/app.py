"""`create_app(gate, settings, token)`: the service's routes over one resident `Gate`.

Routes are thin: each parses its body with the shared models (`guardrail.service.models`),
checks the caps, runs one `Gate` call under `Admission` (queue, deadline, cancellation) and
answers with the library's own JSON. Errors become status codes in `http_errors` only.

    POST /v1/verify    Gate.verify   codes, spec(s), metadata -> verdicts
    POST /v1/gate      Gate.gate     candidates, spec(s), policy, ask -> GateResult
    POST /v1/observe   Gate.observe  codes, spec, probes -> observations
    POST /v1/search    collection, query, spec, fetch_k, policy -> GateResult + spec sources
    GET  /v1/health    engine, image, runtime, pool and queue figures (503 unless it can judge)
    GET  /metrics      Prometheus text
    GET  /openapi.json the schema

The lifespan starts the pool in the background (a missing engine does not stop the service:
requests are 503 until it answers) and, at shutdown (after uvicorn has drained in-flight
requests), closes the gate: its containers are removed.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from pydantic import BaseModel
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp

from guardrail.errors import GuardrailError
from guardrail.gate import Gate, GateResult
from guardrail.searching import gated_search
from guardrail.service.admission import Admission, Refused
from guardrail.service.envelope import Envelope
from guardrail.service.health import health, judging_sandbox, pool_figures
from guardrail.service.http_errors import RequestTooLargeError, error_response, http_error_for
from guardrail.service.indexes import OpenIndexes
from guardrail.service.interruptible import RequestCancelled
from guardrail.service.logs import logger
from guardrail.service.metrics import Metrics
from guardrail.service.models import (
    API_PREFIX,
    ErrorBody,
    GateRequest,
    HealthResponse,
    ObserveRequest,
    ObserveResponse,
    SearchRequest,
    SearchResponse,
    SpecArgument,
    VerifyRequest,
    VerifyResponse,
)
from guardrail.service.settings import ServiceSettings
from guardrail.spec import Spec

__all__ = ["create_app"]

T = TypeVar("T")
_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (401, 404, 413, 422, 429, 503, 504)
}


def _json(model: BaseModel, status: int = 200) -> Response:
    return Response(model.model_dump_json(), status_code=status, media_type="application/json")


def _test_count(spec: SpecArgument) -> int:
    if spec is None or isinstance(spec, Spec):
        return 0 if spec is None else len(spec.tests)
    return sum(len(one.tests) for one in {one for one in spec if one is not None})


async def _disconnected(request: Request) -> None:
    """Completes when the client goes away (the body has been read by then)."""
    while (await request.receive())["type"] != "http.disconnect":
        pass


def _warm_up(gate: Gate) -> None:
    warm = getattr(judging_sandbox(gate), "warm_up", None)
    if warm is None:
        return
    try:
        warm()
    except Exception as exc:  # the engine may come later; requests say 503 meanwhile
        logger.warning("pool warm-up failed", extra={"error": f"{type(exc).__name__}: {exc}"})


def _close(gate: Gate) -> int:
    """Close the gate; how many containers were removed (when the sandbox can tell)."""
    shutdown = getattr(judging_sandbox(gate), "shutdown", None)
    removed = int(shutdown()) if shutdown is not None else 0
    gate.close()
    return removed


@dataclass
class _Service:
    """What the routes share: the gate, its settings, the queue, the metrics, the indexes."""

    gate: Gate
    settings: ServiceSettings
    admission: Admission
    metrics: Metrics
    opened: OpenIndexes
    version: str

    @property
    def sandbox(self) -> Any:
        return judging_sandbox(self.gate)

    def cap(self, what: str, count: int, most: int, setting: str) -> None:
        if count > most:
            raise RequestTooLargeError(
                f"{count} {what} in one request; this server takes at most {most}",
                hint=f"split the request, or start the server with a larger --{setting}",
            )

    async def judged(self, request: Request, work: Callable[[], T], **log: Any) -> T:
        request.state.log = log
        return await self.admission.run(work, lambda: _disconnected(request))

    async def on_error(self, request: Request, exc: Exception) -> Response:
        error = http_error_for(exc)
        if isinstance(exc, Refused | RequestCancelled):
            self.metrics.refused(type(exc).__name__)
        if error.kind == "InternalError":
            logger.error("internal error", exc_info=exc)
        request.state.log = {**getattr(request.state, "log", {}), "error": error.kind}
        return error_response(error)

    @contextlib.asynccontextmanager
    async def lifespan(self, _: FastAPI) -> AsyncIterator[None]:
        warming = asyncio.ensure_future(asyncio.to_thread(_warm_up, self.gate))
        size = pool_figures(self.sandbox).size
        logger.info("serving", extra={"url": self.settings.where, "pool_size": size})
        yield
        self.admission.draining = True
        with contextlib.suppress(Exception):
            await warming
        removed = await asyncio.to_thread(_close, self.gate)
        self.admission.close()
        logger.info("stopped", extra={"containers_removed": removed})


def create_app(
    gate: Gate,
    settings: ServiceSettings,
    token: str,
    *,
    indexes: OpenIndexes | None = None,
    version: str = "0.1.0",
) -> ASGIApp:
    """The ASGI app: routes over ``gate``, wrapped in the token/size/log/metrics envelope."""
    service = _Service(
        gate=gate,
        settings=settings,
        admission=Admission(settings.concurrency, settings.queue_size, settings.deadline_s),
        metrics=Metrics(),
        opened=indexes or OpenIndexes(settings.index_dir, settings.chroma_url, settings.embedding),
        version=version,
    )
    app = FastAPI(
        title="guardrail",
        version=version,
        summary="Retrieve-then-verify: run retrieved code against tests in a sandbox.",
        docs_url=None,
        redoc_url=None,
        lifespan=service.lifespan,
    )
    for family in (RequestValidationError, Refused, RequestCancelled, GuardrailError, Exception):
        app.add_exception_handler(family, service.on_error)
    _judging_routes(app, service)
    _operator_routes(app, service)
    app.state.service = service
    return Envelope(
        app, token=token, max_body_bytes=settings.max_body_bytes, metrics=service.metrics
    )


def _judging_routes(app: FastAPI, service: _Service) -> None:
    """The four routes that run the gate, each one `Gate` call under admission."""
    gate, settings, metrics = service.gate, service.settings, service.metrics

    @app.post(f"{API_PREFIX}/verify", response_model=VerifyResponse, responses=_ERRORS)
    async def verify(body: VerifyRequest, request: Request) -> Response:
        """One verdict per code, in order (`Gate.verify`)."""
        service.cap("codes", len(body.codes), settings.max_candidates, "max-candidates")
        service.cap("tests", _test_count(body.spec), settings.max_tests, "max-tests")
        verdicts = await service.judged(
            request,
            lambda: gate.verify(body.codes, body.spec, metadata=body.metadata),
            candidates=len(body.codes),
        )
        metrics.verdicts(verdicts)
        return _json(VerifyResponse(verdicts=verdicts))

    @app.post(f"{API_PREFIX}/gate", response_model=GateResult, responses=_ERRORS)
    async def gate_route(body: GateRequest, request: Request) -> Response:
        """Verify candidates and apply the policy (`Gate.gate`): a `GateResult`."""
        count = len(body.candidates)
        service.cap("candidates", count, settings.max_candidates, "max-candidates")
        service.cap("tests", _test_count(body.spec), settings.max_tests, "max-tests")
        result = await service.judged(
            request,
            lambda: gate.gate(body.candidates, body.spec, policy=body.policy, ask=body.ask),
            candidates=count,
        )
        metrics.verdicts(item.verdict for item in result.judged)
        return _json(result)

    @app.post(f"{API_PREFIX}/observe", response_model=ObserveResponse, responses=_ERRORS)
    async def observe(body: ObserveRequest, request: Request) -> Response:
        """What each code returns or raises on each probe (`Gate.observe`)."""
        service.cap("codes", len(body.codes), settings.max_candidates, "max-candidates")
        tests = len(body.probes) + len(body.spec.tests)
        service.cap("probes and tests", tests, settings.max_tests, "max-tests")
        found = await service.judged(
            request,
            lambda: gate.observe(body.codes, body.spec, body.probes, metadata=body.metadata),
            candidates=len(body.codes),
        )
        return _json(ObserveResponse(observations=found))

    @app.post(f"{API_PREFIX}/search", response_model=SearchResponse, responses=_ERRORS)
    async def search(body: SearchRequest, request: Request) -> Response:
        """Retrieve ``fetch_k`` snippets of a collection of the server's index and gate them."""
        service.cap("snippets to fetch", body.fetch_k, settings.max_fetch_k, "max-fetch-k")
        service.cap("tests", _test_count(body.spec), settings.max_tests, "max-tests")

        def work() -> SearchResponse:
            index = service.opened.get(body.collection)
            result, sources = gated_search(
                index, gate, body.query, body.spec,
                fetch_k=body.fetch_k, policy=body.policy, ask=body.ask,
            )  # fmt: skip
            return SearchResponse(collection=index.name, result=result, spec_sources=sources)

        found = await service.judged(request, work, collection=body.collection)
        metrics.verdicts(item.verdict for item in found.result.judged)
        return _json(found)


def _operator_routes(app: FastAPI, service: _Service) -> None:
    """Health and metrics: what a load balancer and a scraper read."""
    admission = service.admission

    @app.get(f"{API_PREFIX}/health", response_model=HealthResponse, responses=_ERRORS)
    async def health_route() -> Response:
        """200 when the sandbox can judge now, else 503 with the same figures."""
        report = await health(service.gate, admission, service.version)
        return _json(report, 200 if report.status == "ok" else 503)

    @app.get("/metrics", response_class=PlainTextResponse)
    async def metrics_route() -> Response:
        """Prometheus text: requests, latencies, verdicts, refusals, queue and pool gauges."""
        pool = pool_figures(service.sandbox)
        gauges = {
            "guardrail_queue_running": ("Requests being judged.", admission.running),
            "guardrail_queue_waiting": ("Requests waiting for a slot.", admission.waiting),
            "guardrail_queue_capacity": ("Requests that may wait.", admission.capacity),
            "guardrail_concurrency": ("Requests judged at once.", admission.concurrency),
            "guardrail_pool_size": ("Sandbox containers run in parallel.", pool.size),
            "guardrail_pool_live": ("Sandbox containers that exist.", pool.live or 0),
            "guardrail_containers_started": ("Containers started.", pool.containers_started or 0),
            "guardrail_jobs_run": ("Sandbox jobs run.", pool.jobs_run or 0),
            "guardrail_sandbox_faults": ("Container faults.", pool.faults or 0),
            "guardrail_open_collections": ("Collections kept open.", len(service.opened)),
            "guardrail_draining": ("1 while shutting down.", int(admission.draining)),
        }
        text = service.metrics.render(gauges)
        return Response(text, media_type="text/plain; version=0.0.4; charset=utf-8")
