"""The root ``guardrail`` Typer app: registers each command module and maps errors to exit codes.

Exit codes: 0 success, 1 the command ran but nothing verified, 2 bad input, 3 the sandbox or
another backend is unavailable, 70 an internal error (the table is in `guardrail.cli.common`).
"""

from __future__ import annotations

from typing import Annotated

import typer

from guardrail.cli import audit, common, index, sandbox, search, verify

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
app.add_typer(sandbox.app, name="sandbox")
app.add_typer(audit.app, name="audit")


def _register_eval() -> None:
    """``guardrail eval`` lives in the optional guardrail-eval distribution."""
    try:
        from guardrail_eval.cli import app as eval_app
    except ImportError as exc:
        missing = str(exc)

        @app.command(
            "eval", help="Measure how often an agent acts on buggy code (needs guardrail-eval)."
        )
        def eval_missing() -> None:
            from guardrail.cli.common import fail

            fail(
                f"`guardrail eval` needs the guardrail-eval package ({missing})",
                hint="install it with `pip install -e eval` from a guardrail checkout",
                code=2,
            )

        return
    app.add_typer(eval_app, name="eval")


_register_eval()


def main() -> None:
    app()
