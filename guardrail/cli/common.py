"""Shared CLI plumbing: the error-to-exit-code mapping and the Rich consoles."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import NoReturn

import typer
from rich.console import Console
from rich.text import Text

from guardrail.errors import GuardrailError, InputError, UnavailableError
from guardrail.safetext import clean

console = Console()
err_console = Console(stderr=True)

EXIT_NONE_VERIFIED = 1
EXIT_BAD_INPUT = 2
EXIT_UNAVAILABLE = 3


def fail(message: str, *, hint: str = "", code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print one ``error:`` line and an optional hint line, then exit with ``code``.

    Messages quote bad input (file names, ids, values), so they are printed as plain text.
    """
    err_console.print(Text("error: ", "bold red") + clean(message), soft_wrap=True)
    if hint:
        err_console.print(Text("hint: ", "dim") + clean(hint), soft_wrap=True)
    raise typer.Exit(code)


def exit_code_for(error: GuardrailError) -> int:
    if isinstance(error, InputError):
        return EXIT_BAD_INPUT
    if isinstance(error, UnavailableError):
        return EXIT_UNAVAILABLE
    return EXIT_BAD_INPUT


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Turn a `GuardrailError` raised inside the block into one error line and its exit code.

    Every command wraps its body in this, so in-process runs (``CliRunner``) see the same exit
    codes as the installed command.
    """
    try:
        yield
    except GuardrailError as error:
        fail(str(error), hint=error.hint, code=exit_code_for(error))
