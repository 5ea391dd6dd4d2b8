"""``guardrail audit``: audits of code and of retrieval pipelines, with execution evidence.

``guardrail audit retriever`` (`guardrail.cli.audit_retriever`) runs a user's own retriever
through the eval.
"""

from __future__ import annotations

import typer

from guardrail.cli import audit_retriever

app = typer.Typer(
    help="Audit retrieval pipelines for the near-clone hazard, with execution evidence.",
    no_args_is_help=True,
)
audit_retriever.register(app)
