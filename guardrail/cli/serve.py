"""``guardrail serve``: one resident gate that many agents share (see `guardrail.service`).

Every option is checked before anything is bound or started: a bad value is exit 2 naming it,
a sandbox image or runtime the engine lacks is exit 3. An engine that does not answer yet is
not fatal: the service starts, says 503 until the engine answers, and recovers by itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from guardrail.cli.common import reporting_errors, warn
from guardrail.cli.index import ChromaUrlOption, EmbeddingOption, IndexDirOption
from guardrail.cli.options import (
    BackendOption,
    ImageOption,
    NoCacheOption,
    RayAddressOption,
    RuntimeOption,
    TimeoutOption,
    build_sandbox,
)
from guardrail.service.settings import DEFAULT_PORT, ServiceSettings


def register(app: typer.Typer) -> None:
    """Add the ``serve`` command to ``app``."""
    app.command("serve")(serve)


def serve(  # noqa: PLR0917 - Typer maps parameters to options; callers never pass them positionally
    host: Annotated[
        str, typer.Option(help="Address to listen on; anything but loopback needs --token.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port (0: any free one, logged).")] = DEFAULT_PORT,
    socket: Annotated[
        Path | None,
        typer.Option("--socket", help="Listen on this unix socket (created 0600) instead."),
    ] = None,
    token: Annotated[
        str | None,
        typer.Option(
            help="Bearer token clients must send (default: $GUARDRAIL_TOKEN, else the token"
            " file, generated on first start).",
            show_default=False,
        ),
    ] = None,
    token_file: Annotated[
        Path | None,
        typer.Option(help="Where the token is kept, mode 0600 (default: user config dir)."),
    ] = None,
    pool_size: Annotated[
        int | None,
        typer.Option(
            envvar="GUARDRAIL_POOL_SIZE",
            help="Sandbox containers run in parallel (default: CPU count): N concurrent"
            " requests run N-wide up to it.",
        ),
    ] = None,
    concurrency: Annotated[
        int, typer.Option(help="Requests judged at once; the rest wait in the queue.")
    ] = 8,
    queue_size: Annotated[
        int, typer.Option(help="Requests that may wait; beyond it: 429 with Retry-After.")
    ] = 64,
    deadline: Annotated[
        float, typer.Option(help="Seconds a request may take, queue included (504 beyond).")
    ] = 120.0,
    drain: Annotated[
        float, typer.Option(help="On SIGTERM, seconds in-flight requests may still take.")
    ] = 60.0,
    max_body_bytes: Annotated[int, typer.Option(help="Largest request body (413).")] = 8 << 20,
    max_candidates: Annotated[int, typer.Option(help="Candidates per request (413).")] = 200,
    max_tests: Annotated[int, typer.Option(help="Tests or probes per request (413).")] = 1_000,
    max_fetch_k: Annotated[int, typer.Option(help="Largest fetch_k of a search (413).")] = 200,
    context_root: Annotated[
        list[Path] | None,
        typer.Option(
            "--context-root",
            help="A host folder candidates' module context may be read from (repeatable);"
            " collections opened trust the folders they were indexed from.",
        ),
    ] = None,
    image: ImageOption = None,
    timeout: TimeoutOption = 5.0,
    runtime: RuntimeOption = None,
    backend: BackendOption = None,
    ray_address: RayAddressOption = None,
    no_cache: NoCacheOption = False,
    index_dir: IndexDirOption = None,
    chroma_url: ChromaUrlOption = None,
    embedding: EmbeddingOption = "minilm",
    log_level: Annotated[
        str, typer.Option(help="debug, info, warning or error (JSON lines on stderr).")
    ] = "info",
) -> None:
    """Serve the gate over HTTP: POST /v1/verify, /v1/gate, /v1/observe, /v1/search;
    GET /v1/health, /metrics, /openapi.json. Every endpoint needs the bearer token."""
    with reporting_errors():
        from guardrail.errors import EngineUnavailableError, InputError
        from guardrail.sandbox.docker import DockerSandbox
        from guardrail.service.server import serve as run_service

        if log_level.lower() not in {"debug", "info", "warning", "error"}:
            raise InputError(
                f"--log-level must be debug, info, warning or error, not {log_level!r}"
            )
        settings = ServiceSettings(
            host=host,
            port=port,
            socket=socket,
            token=token,
            token_file=token_file,
            max_body_bytes=max_body_bytes,
            max_candidates=max_candidates,
            max_tests=max_tests,
            max_fetch_k=max_fetch_k,
            concurrency=concurrency,
            queue_size=queue_size,
            deadline_s=deadline,
            drain_s=drain,
            index_dir=index_dir,
            chroma_url=chroma_url,
            embedding=embedding,
            context_roots=tuple(context_root or ()),
        )
        sandbox = build_sandbox(
            image=image,
            timeout=timeout,
            runtime=runtime,
            pool_size=pool_size,
            backend=backend,
            ray_address=ray_address,
        )
        if isinstance(sandbox, DockerSandbox):
            try:
                sandbox.check_ready()
            except EngineUnavailableError as exc:  # it may come later: 503 until it does
                warn(f"{exc}; serving anyway, requests are 503 until the engine answers")
        run_service(settings, sandbox, cache=not no_cache, log_level=log_level)
