"""Shared CLI plumbing: exit codes, the error and warning lines, and the Rich consoles.

Every ``guardrail`` command (and ``guardrail eval``) exits with one of these codes:

====  ===========================================================================================
code  meaning
====  ===========================================================================================
0     success; for ``verify`` and ``search``: at least one candidate verified
1     the command ran, but no candidate verified (``verify``, ``search``)
2     bad input: a file, line, option or ``GUARDRAIL_*`` variable that cannot be used (the
      message names it); nothing has run. Also usage errors (unknown option, missing argument)
3     a backend is unavailable: no Docker engine, no sandbox image, no Chroma server; or
      ``sandbox check`` found the sandbox unsafe
70    internal error: a bug in guardrail, not in the input (one line; the traceback with
      ``--debug`` or ``GUARDRAIL_DEBUG=1``); please report it
130   interrupted (Ctrl-C; 143 for SIGTERM), the shell's own code: sandbox containers are
      removed first, and an interrupted ``index`` has written nothing
====  ===========================================================================================

Warnings that cost no verdict (the verdict cache could not be used, see `CacheWarning`) are one
``warning:`` line on stderr each and do not change the exit code.
"""

from __future__ import annotations

import traceback
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import NoReturn, TextIO

import typer
from rich.console import Console
from rich.text import Text

from guardrail.errors import CacheWarning, GuardrailError, InputError, UnavailableError
from guardrail.safetext import clean

console = Console()
err_console = Console(stderr=True)

EXIT_NONE_VERIFIED = 1
EXIT_BAD_INPUT = 2
EXIT_UNAVAILABLE = 3
EXIT_INTERNAL = 70  # EX_SOFTWARE in BSD's sysexits.h
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a Ctrl-C

# Set by the root command's ``--debug`` (or ``$GUARDRAIL_DEBUG``) for this invocation.
_debug = False


def set_debug(enabled: bool) -> None:
    global _debug  # noqa: PLW0603 - one flag per process, set once by the root command
    _debug = enabled


def _line(label: str, style: str, message: str) -> None:
    # Messages quote file names, lines and values from the user's input: plain text, never markup.
    err_console.print(
        Text.assemble((label, style), " ", clean(message)), highlight=False, soft_wrap=True
    )


def warn(message: str) -> None:
    """Print one ``warning:`` line; the exit code does not change."""
    _line("warning:", "bold yellow", message)


def fail(message: str, *, hint: str = "", code: int = EXIT_BAD_INPUT) -> NoReturn:
    """Print one ``error:`` line and an optional hint line, then exit with ``code``."""
    _line("error:", "bold red", message)
    if hint:
        _line("hint:", "dim", hint)
    raise typer.Exit(code)


def exit_code_for(error: GuardrailError) -> int:
    if isinstance(error, InputError):
        return EXIT_BAD_INPUT
    if isinstance(error, UnavailableError):
        return EXIT_UNAVAILABLE
    return EXIT_BAD_INPUT


@contextmanager
def reporting_errors() -> Iterator[None]:
    """Run a command's body: errors become one line and their exit code, warnings one line each.

    A `GuardrailError` exits with its family's code; any other exception is a bug in guardrail and
    exits with `EXIT_INTERNAL`. Every command wraps its body in this, so in-process runs
    (``CliRunner``) see the same exit codes and lines as the installed command.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("always", CacheWarning)  # VerdictCache already says it only once
        warnings.showwarning = _show_warning(warnings.showwarning)
        try:
            yield
        except GuardrailError as error:
            fail(str(error), hint=error.hint, code=exit_code_for(error))
        except (typer.Exit, typer.Abort, typer.TyperException):  # exit codes decided already
            raise
        except Exception as exc:  # the one place where a bug becomes an exit code
            _internal_error(exc)


def _show_warning(default: Callable[..., None]) -> Callable[..., None]:
    def show(  # noqa: PLR0917 - the signature of warnings.showwarning
        message: Warning | str,
        category: type[Warning],
        filename: str,
        lineno: int,
        file: TextIO | None = None,
        line: str | None = None,
    ) -> None:
        if issubclass(category, CacheWarning):
            warn(str(message))
        else:
            default(message, category, filename, lineno, file, line)

    return show


def _internal_error(exc: Exception) -> NoReturn:
    if _debug:
        err_console.print(
            Text("".join(traceback.format_exception(exc))), highlight=False, soft_wrap=True
        )
    fail(
        f"internal error: {type(exc).__name__}: {exc}",
        hint="this is a bug in guardrail, not in your input; please report it with the command"
        + (" and the traceback above" if _debug else " and the traceback of --debug"),
        code=EXIT_INTERNAL,
    )
