"""`RemoteGate`: the client of ``guardrail serve``, with the `Gate` interface.

Anything that takes a `Gate` (the LangChain and LlamaIndex integrations, `gated_search`) takes a
`RemoteGate` unchanged (`guardrail.gatelike.GateLike`): ``verify``, ``gate``, ``observe`` and
their ``a``-prefixed async twins, plus ``search`` (a collection of the server's index) and
``health``. Verdicts arrive as the server's `Gate` made them (the same JSON, validated again
here, which changes nothing).

Importing this module costs pydantic and httpx only: never chromadb, torch, docker or the eval.

Connections are pooled (one ``httpx.Client``, and one ``httpx.AsyncClient`` per event loop).
Retries, only where repeating cannot do harm: a connection that could not be made (the request
never left), a 429 (the queue was full: nothing ran) or a 503 from a draining server, after the
server's ``Retry-After``; a read that failed after the request was sent is retried for the
idempotent GETs only. An engine the server lost is `EngineUnavailableError` at once.

One implementation for sync and async: requests are built and answers read by the same
functions (`_Call`, `_retry_delay`, `_answer`); `_send` and `_asend` only drive the transport.
"""

from __future__ import annotations

import asyncio
import os
import time
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Any, Self, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from guardrail import errors
from guardrail.gate import Candidate, GateResult, Policy, SpecArg
from guardrail.probes import Probe
from guardrail.service.auth import read_client_token
from guardrail.service.models import (
    API_PREFIX,
    ErrorBody,
    GateRequest,
    HealthResponse,
    ObserveRequest,
    ObserveResponse,
    SearchRequest,
    SearchResponse,
    VerifyRequest,
    VerifyResponse,
)
from guardrail.spec import Spec
from guardrail.verdict import Observation, Verdict

__all__ = ["SERVER_ENV_VAR", "RemoteGate", "RemoteInternalError"]

SERVER_ENV_VAR = "GUARDRAIL_SERVER"
_MAX_RETRY_DELAY_S = 30.0
M = TypeVar("M", bound=BaseModel)


class RemoteInternalError(RuntimeError):
    """The server answered 500: a bug in guardrail (the server's log has the traceback)."""


@dataclass(frozen=True)
class _Call:
    method: str
    path: str
    body: bytes | None = None

    @property
    def idempotent(self) -> bool:
        return self.method == "GET"


def _retry_delay(  # noqa: PLR0911 - one return per rule of the module docstring
    call: _Call, attempt: int, outcome: httpx.Response | Exception, retries: int
) -> float | None:
    """Seconds to wait before trying ``call`` again, or None to stop (see the module docstring)."""
    if attempt >= retries:
        return None
    backoff: float = min(_MAX_RETRY_DELAY_S, 0.2 * 2.0**attempt)
    if isinstance(outcome, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
        return backoff
    if isinstance(outcome, httpx.TransportError):
        return backoff if call.idempotent else None
    if isinstance(outcome, Exception):
        return None
    draining = outcome.status_code == 503 and _kind(outcome) == "Draining"
    if outcome.status_code == 429 or draining:
        try:
            return min(_MAX_RETRY_DELAY_S, float(outcome.headers.get("retry-after") or backoff))
        except ValueError:
            return backoff
    return None


def _kind(response: httpx.Response) -> str:
    try:
        return ErrorBody.model_validate_json(response.content).error.kind
    except ValueError:
        return ""


def _library_error(kind: str) -> type[errors.GuardrailError] | None:
    """The library's exception class of that name (the server sends ``kind``)."""
    found = getattr(errors, kind, None)
    if isinstance(found, type) and issubclass(found, errors.GuardrailError):
        return found
    if kind in {"IndexNotFoundError", "ChromaUnavailableError", "CollectionNameError"}:
        from guardrail.index import errors as index_errors  # rare: chromadb only then

        found = getattr(index_errors, kind)
        assert isinstance(found, type)
        assert issubclass(found, errors.GuardrailError)
        return found
    return None


class RemoteGate:
    """A `Gate` whose sandbox, verdict cache and indexes live in a ``guardrail serve``.

    Args:
        url: ``http://HOST:PORT`` or ``unix:///path/to/socket``; default ``$GUARDRAIL_SERVER``.
        token: the server's bearer token; default ``$GUARDRAIL_TOKEN``, else the default token
            file of this user (a server on this machine).
        timeout_s: how long one request may take, connect to last byte (the server's own
            deadline answers first when it is shorter).
        retries: how often a refused or unconnectable request is tried again.
        policy: the default policy of `gate` and `search` (``None``: the server's).
        ask: whether `gate` and `search` ask a question (``None``: the server's default).

    Raises:
        InputError: no URL, or one that is not http(s) or unix.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        token: str | None = None,
        timeout_s: float = 300.0,
        retries: int = 3,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> None:
        url = url or os.environ.get(SERVER_ENV_VAR) or None
        if url is None:
            raise errors.InputError(
                f"no guardrail server given: pass a URL or set ${SERVER_ENV_VAR}",
                hint="e.g. http://127.0.0.1:8765 or unix:///run/guardrail.sock (`guardrail serve`)",
            )
        self.url = url
        self.policy = None if policy is None else Policy(policy)
        self.ask = ask
        self.retries = retries
        self._uds: str | None = None
        if url.startswith("unix://"):
            self._uds = url.removeprefix("unix://")
            self._base = "http://guardrail"
        elif url.startswith(("http://", "https://")):
            self._base = url.rstrip("/")
        else:
            raise errors.InputError(
                f"server URL {url!r} is neither http(s)://HOST:PORT nor unix:///PATH"
            )
        found = read_client_token(token)
        self._headers = {"Authorization": f"Bearer {found}"} if found else {}
        self._headers["Content-Type"] = "application/json"
        self._timeout = httpx.Timeout(timeout_s, connect=min(10.0, timeout_s))
        self._client: httpx.Client | None = None
        self._async_clients: weakref.WeakKeyDictionary[
            asyncio.AbstractEventLoop, httpx.AsyncClient
        ] = weakref.WeakKeyDictionary()

    # -- the Gate interface --------------------------------------------------------------------

    def verify(
        self,
        codes: Sequence[str],
        spec: SpecArg,
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[Verdict]:
        """One verdict per code, in order (`Gate.verify`, in the server)."""
        return self._send(_verify_call(codes, spec, metadata), VerifyResponse).verdicts

    async def averify(
        self,
        codes: Sequence[str],
        spec: SpecArg,
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[Verdict]:
        return (await self._asend(_verify_call(codes, spec, metadata), VerifyResponse)).verdicts

    def gate(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        *,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> GateResult:
        """Verify ``candidates`` and apply the policy (`Gate.gate`, in the server)."""
        return self._send(self._gate_call(candidates, spec, policy, ask), GateResult)

    async def agate(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        *,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> GateResult:
        return await self._asend(self._gate_call(candidates, spec, policy, ask), GateResult)

    def observe(
        self,
        codes: Sequence[str],
        spec: Spec,
        probes: Sequence[Probe],
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[list[Observation]]:
        """What each code returns or raises on each probe (`Gate.observe`, in the server)."""
        call = _observe_call(codes, spec, probes, metadata)
        return self._send(call, ObserveResponse).observations

    async def aobserve(
        self,
        codes: Sequence[str],
        spec: Spec,
        probes: Sequence[Probe],
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[list[Observation]]:
        call = _observe_call(codes, spec, probes, metadata)
        return (await self._asend(call, ObserveResponse)).observations

    # -- what only the service has -------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        collection: str = "guardrail",
        spec: Spec | None = None,
        fetch_k: int = 20,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> SearchResponse:
        """Retrieve ``fetch_k`` snippets of ``collection`` (in the server's index), gate them."""
        call = self._search_call(
            query, collection=collection, spec=spec, fetch_k=fetch_k, policy=policy, ask=ask
        )
        return self._send(call, SearchResponse)

    async def asearch(
        self,
        query: str,
        *,
        collection: str = "guardrail",
        spec: Spec | None = None,
        fetch_k: int = 20,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> SearchResponse:
        call = self._search_call(
            query, collection=collection, spec=spec, fetch_k=fetch_k, policy=policy, ask=ask
        )
        return await self._asend(call, SearchResponse)

    def health(self) -> HealthResponse:
        """The server's health (also when it says 503: the engine is lost, or it drains)."""
        return self._send(_Call("GET", f"{API_PREFIX}/health"), HealthResponse)

    async def ahealth(self) -> HealthResponse:
        return await self._asend(_Call("GET", f"{API_PREFIX}/health"), HealthResponse)

    # -- building calls ------------------------------------------------------------------------

    def _gate_call(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        policy: Policy | str | None,
        ask: bool | None,
    ) -> _Call:
        chosen = self.policy if policy is None else Policy(policy)
        request = _build(
            GateRequest,
            candidates=list(candidates),
            spec=_spec_argument(spec),
            policy=chosen,
            ask=self.ask if ask is None else ask,
        )
        return _Call("POST", f"{API_PREFIX}/gate", request.model_dump_json().encode())

    def _search_call(
        self,
        query: str,
        *,
        collection: str,
        spec: Spec | None,
        fetch_k: int,
        policy: Policy | str | None,
        ask: bool | None,
    ) -> _Call:
        request = _build(
            SearchRequest,
            collection=collection,
            query=query,
            spec=spec,
            fetch_k=fetch_k,
            policy=self.policy if policy is None else Policy(policy),
            ask=self.ask if ask is None else ask,
        )
        return _Call("POST", f"{API_PREFIX}/search", request.model_dump_json().encode())

    # -- transport: the only part that differs between sync and async --------------------------

    def _request(self, client: httpx.Client | httpx.AsyncClient, call: _Call) -> httpx.Request:
        return client.build_request(call.method, call.path, content=call.body)

    def _send(self, call: _Call, model: type[M]) -> M:
        if self._client is None:
            transport = httpx.HTTPTransport(uds=self._uds) if self._uds else None
            self._client = httpx.Client(
                base_url=self._base,
                headers=self._headers,
                timeout=self._timeout,
                transport=transport,
            )
        attempt = 0
        while True:
            outcome: httpx.Response | Exception
            try:
                outcome = self._client.send(self._request(self._client, call))
            except httpx.TransportError as exc:
                outcome = exc
            delay = _retry_delay(call, attempt, outcome, self.retries)
            if delay is None:
                return self._answer(call, outcome, model)
            time.sleep(delay)
            attempt += 1

    async def _asend(self, call: _Call, model: type[M]) -> M:
        loop = asyncio.get_running_loop()
        client = self._async_clients.get(loop)
        if client is None:
            transport = httpx.AsyncHTTPTransport(uds=self._uds) if self._uds else None
            client = httpx.AsyncClient(
                base_url=self._base,
                headers=self._headers,
                timeout=self._timeout,
                transport=transport,
            )
            self._async_clients[loop] = client
        attempt = 0
        while True:
            outcome: httpx.Response | Exception
            try:
                outcome = await client.send(self._request(client, call))
            except httpx.TransportError as exc:
                outcome = exc
            delay = _retry_delay(call, attempt, outcome, self.retries)
            if delay is None:
                return self._answer(call, outcome, model)
            await asyncio.sleep(delay)
            attempt += 1

    # -- reading answers: the one place the server's errors become the library's ---------------

    def _answer(self, call: _Call, outcome: httpx.Response | Exception, model: type[M]) -> M:
        if isinstance(outcome, Exception):
            raise errors.ServiceUnavailableError(
                f"no guardrail server answered {call.method} {call.path} at {self.url}:"
                f" {type(outcome).__name__}: {outcome}"
            ) from None
        status = outcome.status_code
        if status == 200 or (status == 503 and model is HealthResponse):
            return model.model_validate_json(outcome.content)
        try:
            detail = ErrorBody.model_validate_json(outcome.content).error
        except ValueError:
            raise errors.ServiceUnavailableError(
                f"{self.url} answered {status} without a guardrail error body; is it a"
                " guardrail server?"
            ) from None
        message = f"{detail.message} (server {self.url})"
        if status == 401:
            raise errors.ServiceAuthError(message)
        if status >= 500 and detail.kind == "InternalError":
            raise RemoteInternalError(message)
        family = _library_error(detail.kind)
        if family is not None:
            raise family(message, hint=detail.hint or None)
        if status in (429, 503, 504):
            raise errors.ServiceUnavailableError(message, hint=detail.hint or None)
        raise errors.InputError(message, hint=detail.hint or None)

    # -- lifetime ------------------------------------------------------------------------------

    def close(self) -> None:
        """Close the pooled connections (the server and its gate live on)."""
        if self._client is not None:
            self._client.close()
            self._client = None

    async def aclose(self) -> None:
        client = self._async_clients.pop(asyncio.get_running_loop(), None)
        if client is not None:
            await client.aclose()
        self.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"RemoteGate({self.url!r})"


def _spec_argument(spec: SpecArg) -> Spec | list[Spec | None] | None:
    return spec if spec is None or isinstance(spec, Spec) else list(spec)


def _verify_call(
    codes: Sequence[str], spec: SpecArg, metadata: Sequence[Mapping[str, Any] | None] | None
) -> _Call:
    request = _build(
        VerifyRequest,
        codes=list(codes),
        spec=_spec_argument(spec),
        metadata=None if metadata is None else [None if m is None else dict(m) for m in metadata],
    )
    return _Call("POST", f"{API_PREFIX}/verify", request.model_dump_json().encode())


def _observe_call(
    codes: Sequence[str],
    spec: Spec,
    probes: Sequence[Probe],
    metadata: Sequence[Mapping[str, Any] | None] | None,
) -> _Call:
    request = _build(
        ObserveRequest,
        codes=list(codes),
        spec=spec,
        probes=list(probes),
        metadata=None if metadata is None else [None if m is None else dict(m) for m in metadata],
    )
    return _Call("POST", f"{API_PREFIX}/observe", request.model_dump_json().encode())


def _build(model: type[M], **fields: Any) -> M:
    """``model(**fields)``; what the server would refuse with 422 is an `InputError` here."""
    try:
        return model(**fields)
    except ValidationError as exc:
        raise errors.InputError(
            f"the request cannot be sent: {errors.describe_validation(exc.errors())}"
        ) from None
