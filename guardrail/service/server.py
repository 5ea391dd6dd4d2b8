"""`serve(settings, sandbox)`: run the service until SIGTERM or SIGINT, then drain and clean up.

The gate is built by one function, `service_gate`, over whatever `Sandbox` it is given (the CLI
gives a `DockerSandbox`; a cluster backend is one more `Sandbox`), wrapped so that a cancelled
request's jobs stop (`InterruptibleSandbox`).

The listening socket is bound here, before uvicorn starts: a unix socket is created 0600 (only
this user can connect; uvicorn would make it 0666), ``port=0`` picks a free port, and the
address is logged as the ``listening`` event (``url``) once it accepts connections. On SIGTERM,
uvicorn stops accepting, waits up to ``drain_s`` for in-flight requests, then the lifespan closes
the gate, which removes its containers.
"""

from __future__ import annotations

import os
import socket
import stat
from pathlib import Path

from guardrail.cache import VerdictCache
from guardrail.errors import InputError
from guardrail.gate import Gate
from guardrail.sandbox.base import Sandbox
from guardrail.service.auth import resolve_token
from guardrail.service.interruptible import InterruptibleSandbox
from guardrail.service.logs import configure_logging, logger
from guardrail.service.settings import ServiceSettings

__all__ = ["bind", "serve", "service_gate"]

_BACKLOG = 2048  # uvicorn's own default


def service_gate(
    sandbox: Sandbox, settings: ServiceSettings, *, cache: VerdictCache | bool = True
) -> Gate:
    """The service's one Gate: ``sandbox`` made interruptible, the configured context roots."""
    return Gate(InterruptibleSandbox(sandbox), cache=cache, context_roots=settings.context_roots)


def bind(settings: ServiceSettings) -> socket.socket:
    """The listening socket: a 0600 unix socket, or TCP on host:port."""
    if settings.socket is not None:
        path = Path(settings.socket)
        try:
            if stat.S_ISSOCK(path.lstat().st_mode):
                path.unlink()  # a stale socket of an earlier run
        except FileNotFoundError:
            pass
        listening = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)
        try:
            listening.bind(str(path))
        except OSError as exc:
            listening.close()
            raise InputError(f"cannot listen on unix socket {str(path)!r}: {exc}") from None
        finally:
            os.umask(old)
        return listening
    family = socket.AF_INET6 if ":" in settings.host else socket.AF_INET
    listening = socket.socket(family, socket.SOCK_STREAM)
    listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listening.bind((settings.host.strip("[]"), settings.port))
    except OSError as exc:
        listening.close()
        raise InputError(f"cannot listen on {settings.host}:{settings.port}: {exc}") from None
    return listening


def serve(
    settings: ServiceSettings,
    sandbox: Sandbox,
    *,
    cache: VerdictCache | bool = True,
    log_level: str = "info",
) -> None:
    """Serve until a signal; every setting is checked (and the token resolved) before anything
    is bound or started.

    Raises:
        InputError: a setting or token that cannot be used, or an address that cannot be bound.
    """
    import uvicorn

    from guardrail import __version__
    from guardrail.service.app import create_app

    configure_logging(log_level)
    # A token is generated only for binds no other machine reaches.
    token = resolve_token(settings.token, settings.token_file, generate=settings.local_only)
    listening = bind(settings)
    listening.listen(_BACKLOG)  # connections wait in the backlog until uvicorn accepts them
    if settings.socket is None:
        settings = _with_port(settings, int(listening.getsockname()[1]))
    gate = service_gate(sandbox, settings, cache=cache)
    app = create_app(gate, settings, token.value, version=__version__)
    config = uvicorn.Config(
        app,
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=int(settings.drain_s),
        server_header=False,
    )
    logger.info(
        "listening",
        extra={
            "url": settings.where,
            "token_source": token.source,
            "token_file": str(token.file) if token.file else None,
        },
    )
    try:
        uvicorn.Server(config).run(sockets=[listening])
    finally:
        listening.close()
        if settings.socket is not None:
            Path(settings.socket).unlink(missing_ok=True)


def _with_port(settings: ServiceSettings, port: int) -> ServiceSettings:
    import dataclasses

    return dataclasses.replace(settings, port=port)
