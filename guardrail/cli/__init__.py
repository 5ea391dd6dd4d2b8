"""The ``guardrail`` command line (Typer + Rich). One module per command or command group."""
