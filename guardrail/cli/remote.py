"""``--server URL`` (or ``$GUARDRAIL_SERVER``) for ``guardrail search`` and ``verify``: the same
command, judged by a ``guardrail serve`` through `RemoteGate`.

This path imports neither chromadb, torch nor docker: the server holds the index, the embedder
and the sandbox. What configures a local sandbox or index is the server's setting instead:
``--no-cache``, ``--path`` and ``--chroma-url`` are refused with ``--server``; ``--image``,
``--runtime``, ``--timeout`` and ``--embedding`` (which ``GUARDRAIL_*`` variables may set for
local runs) are not used.
"""

from __future__ import annotations

from typing import Annotated

import typer

from guardrail.cli.common import fail

__all__ = ["ServerOption", "refuse_local_options"]

ServerOption = Annotated[
    str | None,
    typer.Option(
        "--server",
        envvar="GUARDRAIL_SERVER",
        help="A `guardrail serve` to judge with (http://HOST:PORT or unix:///PATH); its token"
        " from $GUARDRAIL_TOKEN or this user's token file. The server's sandbox, cache and"
        " index settings apply (--image, --runtime, --timeout, --embedding are not used).",
    ),
]


def refuse_local_options(**given: object) -> None:
    """Exit 2 naming the first local-only option that was given together with ``--server``."""
    for name, value in given.items():
        if value:
            fail(
                f"--{name.replace('_', '-')} configures a local sandbox or index; with --server"
                " the server's own settings decide",
                hint="drop it, or start the server with it (`guardrail serve --help`)",
            )
