"""The root ``guardrail`` Typer app: registers each command module and maps errors to exit codes.

Exit codes: 0 success, 1 the command ran but nothing verified, 2 bad input, 3 the sandbox or
another backend is unavailable, 70 an internal error (the table is in `guardrail.cli.common`).
Commands of other distributions (``eval``) come from the ``guardrail.commands`` entry-point
group (`guardrail.cli.plugins`); the core imports none of them.
"""

from __future__ import annotations

from typing import Annotated

import typer

from guardrail.cli import audit, common, index, sandbox, search, serve, verify
from guardrail.cli.plugins import register_plugins

app = typer.Typer(
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


verify.register(app)
index.register(app)
search.register(app)
serve.register(app)
app.add_typer(sandbox.app, name="sandbox")
app.add_typer(audit.app, name="audit")
register_plugins(app)  # `guardrail eval` and third parties' commands (guardrail.cli.plugins)


def main() -> None:
    app()
