"""The root ``guardrail`` Typer app: names each command's module, imported when the command runs.

Exit codes: 0 success, 1 the command ran but nothing verified, 2 bad input, 3 the sandbox or
another backend is unavailable, 70 an internal error (the table is in `guardrail.cli.common`).
Commands of other distributions (``eval``) come from the ``guardrail.commands`` entry-point
group (`guardrail.cli.plugins`); the core imports none of them. ``guardrail search --server``
thus imports what it uses only: no sandbox, index or eval module.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, ClassVar

import typer

from guardrail.cli import common
from guardrail.cli.plugins import PluginCommands


class _Commands(PluginCommands):
    """Each command's module is imported when the command is named (``--help`` names all)."""

    core: ClassVar[Mapping[str, str]] = {
        "verify": "guardrail.cli.verify:register",
        "index": "guardrail.cli.index:register",
        "search": "guardrail.cli.search:register",
        "serve": "guardrail.cli.serve:register",
        "sandbox": "guardrail.cli.sandbox:app",
        "audit": "guardrail.cli.audit:app",
    }


app = typer.Typer(
    cls=_Commands,  # the core's commands, `guardrail eval` and third parties', loaded when named
    name="guardrail",
    help="Retrieve-then-verify: run retrieved code against tests in a Docker sandbox.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)


@app.callback()
def _root(
    debug: Annotated[
        bool,
        typer.Option(
            "--debug", envvar="GUARDRAIL_DEBUG", help="Show the traceback of an internal error."
        ),
    ] = False,
) -> None:
    common.set_debug(debug)


def main() -> None:
    app()
