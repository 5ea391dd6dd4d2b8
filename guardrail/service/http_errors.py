"""The one place the service turns an error into a status code and an error body.

=====  ====================================================================================
code   when
=====  ====================================================================================
401    no or a wrong bearer token (every endpoint; ``WWW-Authenticate: Bearer``)
404    an unknown route, or a collection the server's index does not have
413    a body over ``max_body_bytes``, or more candidates, tests or ``fetch_k`` than allowed
422    a body that does not validate, tests that cannot be used (`SpecError`), other bad input
429    every slot busy and the queue full (``Retry-After``)
499    the client disconnected (logged only: nobody reads the answer)
500    a bug in guardrail (logged with its traceback; the body says only that)
503    the sandbox cannot judge (engine lost, image missing...) or the service is draining
       (``Retry-After``); recovered by itself when the engine answers again
504    the request's deadline passed (its remaining jobs were cancelled; ``Retry-After``)
=====  ====================================================================================

Every error body is `ErrorBody`: ``{"error": {"kind", "message", "hint"}}``; ``kind`` is the
error's class name, which `RemoteGate` maps back to the library's exception.
"""

from __future__ import annotations

from dataclasses import dataclass

from fastapi.exceptions import RequestValidationError
from starlette.responses import Response

from guardrail.errors import (
    GuardrailError,
    InputError,
    SandboxError,
    UnavailableError,
    describe_validation,
)
from guardrail.service.admission import (
    ClientGone,
    DeadlineExceeded,
    Draining,
    QueueFull,
    Refused,
)
from guardrail.service.interruptible import RequestCancelled
from guardrail.service.models import ErrorBody, ErrorDetail

__all__ = ["CLIENT_GONE", "HttpError", "RequestTooLargeError", "error_response", "http_error_for"]

CLIENT_GONE = 499
_SANDBOX_RETRY_S = 5


class RequestTooLargeError(InputError):
    """A request over one of the service's caps (413)."""


@dataclass(frozen=True)
class HttpError:
    status: int
    kind: str
    message: str
    hint: str = ""
    retry_after_s: int | None = None


def http_error_for(exc: BaseException) -> HttpError:  # noqa: PLR0911 - one branch a family
    """The status, kind and message of ``exc`` (see the module docstring)."""
    kind = type(exc).__name__
    if isinstance(exc, Refused):
        status = {QueueFull: 429, Draining: 503, DeadlineExceeded: 504, ClientGone: CLIENT_GONE}
        return HttpError(status[type(exc)], kind, str(exc), retry_after_s=exc.retry_after_s)
    if isinstance(exc, RequestCancelled):
        return HttpError(CLIENT_GONE, kind, str(exc))
    if isinstance(exc, RequestValidationError):
        return HttpError(422, "RequestValidationError", describe_validation(exc.errors()))
    if isinstance(exc, RequestTooLargeError):
        return HttpError(413, kind, str(exc), exc.hint)
    if isinstance(exc, GuardrailError):
        hint = exc.hint
        if type(exc).__name__ == "IndexNotFoundError":  # an InputError, with its own code
            return HttpError(404, kind, str(exc), hint)
        if isinstance(exc, InputError):
            return HttpError(422, kind, str(exc), hint)
        if isinstance(exc, SandboxError):
            return HttpError(503, kind, str(exc), hint, retry_after_s=_SANDBOX_RETRY_S)
        if isinstance(exc, UnavailableError):
            return HttpError(503, kind, str(exc), hint, retry_after_s=_SANDBOX_RETRY_S)
        return HttpError(500, kind, str(exc), hint)
    if isinstance(exc, ValueError | TypeError):  # the Gate's own argument checks
        return HttpError(422, kind, str(exc))
    return HttpError(500, "InternalError", "internal error: a bug in guardrail (see its log)")


def error_response(error: HttpError) -> Response:
    body = ErrorBody(error=ErrorDetail(kind=error.kind, message=error.message, hint=error.hint))
    headers = {}
    if error.retry_after_s is not None:
        headers["Retry-After"] = str(error.retry_after_s)
    if error.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    return Response(
        body.model_dump_json(),
        status_code=error.status,
        media_type="application/json",
        headers=headers,
    )
