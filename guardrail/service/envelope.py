"""The envelope of every request (a pure ASGI middleware, outermost): its id, the bearer token,
the body-size cap, one JSON log line, and the request metrics.

It runs before routing, so nothing (health, metrics, the OpenAPI schema, an unknown path) is
answered without the token, and a body over the cap is refused whether it announced its length
(checked before reading) or came chunked (counted while read).
"""

from __future__ import annotations

import time
import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from guardrail.service.auth import token_matches
from guardrail.service.http_errors import HttpError, RequestTooLargeError, error_response
from guardrail.service.logs import logger
from guardrail.service.metrics import Metrics

__all__ = ["Envelope"]


class Envelope:
    """Wraps the app: auth, size cap, logs and metrics for each HTTP request."""

    def __init__(self, app: ASGIApp, *, token: str, max_body_bytes: int, metrics: Metrics) -> None:
        self.app = app
        self.token = token
        self.max_body_bytes = max_body_bytes
        self.metrics = metrics

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.monotonic()
        request_id = uuid.uuid4().hex[:16]
        scope.setdefault("state", {})["request_id"] = request_id
        status = {"code": 500, "sent": False}

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                status["code"] = message["status"]
                status["sent"] = True
                message.setdefault("headers", []).append((b"x-request-id", request_id.encode()))
            await send(message)

        refusal = self._refusal(scope)
        try:
            if refusal is not None:
                await error_response(refusal)(scope, receive, sending)
            else:
                await self._counted(scope, receive, sending)
        finally:
            self._record(scope, request_id, int(status["code"]), time.monotonic() - started)

    def _refusal(self, scope: Scope) -> HttpError | None:
        headers = dict(scope.get("headers") or ())
        authorization = headers.get(b"authorization", b"").decode("latin-1")
        if not token_matches(authorization, self.token):
            return HttpError(
                401,
                "Unauthorized",
                "a bearer token is required: Authorization: Bearer <token>",
                "the token is the server's --token, $GUARDRAIL_TOKEN, or its token file",
            )
        length = headers.get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.max_body_bytes):
            return self._too_large()
        return None

    def _too_large(self) -> HttpError:
        return HttpError(
            413,
            RequestTooLargeError.__name__,
            f"the request body is over the server's limit of {self.max_body_bytes:,} bytes",
            "send fewer or smaller candidates per request (the server's --max-body-bytes)",
        )

    async def _counted(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The app, with the body counted as it is read: past the cap, the 413 is sent at once,
        the app is told the client left (it stops reading) and whatever it answers is dropped."""
        seen = 0
        over = False

        async def counted() -> Message:
            nonlocal seen, over
            message = await receive()
            if message["type"] == "http.request" and not over:
                seen += len(message.get("body", b""))
                if seen > self.max_body_bytes:
                    over = True
                    await error_response(self._too_large())(scope, receive, send)
                    return {"type": "http.disconnect"}
            return message

        async def sending(message: Message) -> None:
            if not over:
                await send(message)

        await self.app(scope, counted, sending)

    def _record(self, scope: Scope, request_id: str, status: int, seconds: float) -> None:
        route: Any = scope.get("route")
        name = getattr(route, "path", None) or "unmatched"
        method = str(scope.get("method", ""))
        self.metrics.request(method, name, status, seconds)
        extra = scope.get("state", {}).get("log", {})
        logger.info(
            "request",
            extra={
                "request_id": request_id,
                "method": method,
                "route": name,
                "path": str(scope.get("path", ""))[:200],
                "status": status,
                "duration_ms": round(seconds * 1000, 2),
                **extra,
            },
        )
