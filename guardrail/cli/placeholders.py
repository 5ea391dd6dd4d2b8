"""Placeholders a person reads in ``--help``: ``--chroma-url CHROMA_URL``, not ``<str>``.

Typer prints the Python type of every parameter without a metavar (``<str>``, ``<float>``,
``<list[Path]>``, and ``<bool>`` beside every flag, ``--help`` included). `add_placeholders`
gives each such parameter of a command tree the placeholder argparse would (its name in
capitals) and flags none; choices keep Typer's list of them. Metavars a command sets itself
are kept. `guardrail.cli.plugins.PluginCommands` applies it to every command it loads, so
plugins get the same help.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["add_placeholders"]


def add_placeholders(command: Any) -> Any:
    """Set the missing metavars of ``command`` and of every subcommand; returns ``command``."""
    for param in command.params:
        if type(param).__name__ == "TyperArgument" and not _is_choice(param):
            # Typer prints an argument's type beside its name whatever its metavar: no type.
            param.display_type_rich = _no_type
        if param.metavar is not None or _is_choice(param):
            continue
        param.metavar = "" if getattr(param, "is_flag", False) else _placeholder(param)
    if "get_help_option" not in vars(command):  # once per command object
        command.get_help_option = _flag_without_type(command.get_help_option)
    for sub in getattr(command, "commands", {}).values():
        add_placeholders(sub)
    return command


def _no_type(ctx: Any) -> None:
    return None


def _is_choice(param: Any) -> bool:
    descriptor = getattr(param, "type_descriptor", None)
    return bool(getattr(descriptor, "is_choice", False))


def _placeholder(param: Any) -> str:
    longest = max(getattr(param, "opts", []) or [param.name or "value"], key=len)
    return str(longest).lstrip("-").replace("-", "_").upper()


def _flag_without_type(get_help_option: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def quiet(ctx: Any) -> Any:
        option = get_help_option(ctx)  # click makes a new one each time
        if option is not None and option.metavar is None:
            option.metavar = ""
        return option

    return quiet
