"""Commands from other distributions: the ``guardrail.commands`` entry-point group (and
``guardrail.audit_commands`` for ``guardrail audit NAME``).

A distribution adds a command group ``guardrail NAME`` by declaring a `typer.Typer` app in its
``pyproject.toml``, or a single command by declaring its function (guardrail-eval adds
``guardrail eval`` and ``guardrail audit retriever`` this way)::

    [project.entry-points."guardrail.commands"]
    NAME = "package.module:app"

    [project.entry-points."guardrail.audit_commands"]
    NAME = "package.module:command_function"

`register_plugins` mounts each under its entry-point name (``add_typer`` for an app, ``command``
for a function), so the core package imports no plugin by name. Rules:

- a plugin that cannot be loaded (its import raises, or the object is neither a `typer.Typer` nor
  a function) never
  breaks the CLI: ``guardrail NAME`` becomes a stand-in that exits 2 naming the entry point, its
  distribution and the error, and every other command works;
- core commands cannot be replaced: a plugin named like one is not mounted; of two plugins with
  one name, the first found on ``sys.path`` is mounted;
- a command guardrail documents (`KNOWN`: ``eval``; `AUDIT_KNOWN`: ``audit retriever``) has a
  stand-in when no distribution provides it, saying which to install.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from importlib.metadata import EntryPoint, entry_points

import typer

from guardrail.cli.common import EXIT_BAD_INPUT, fail

__all__ = ["AUDIT_GROUP", "AUDIT_KNOWN", "GROUP", "KNOWN", "register_plugins"]

GROUP = "guardrail.commands"
AUDIT_GROUP = "guardrail.audit_commands"
_EVAL_INSTALL = "install it with `pip install -e eval` from a guardrail checkout"
KNOWN = {
    "eval": (
        "Measure how often an agent acts on buggy code (needs guardrail-eval).",
        "guardrail-eval",
        _EVAL_INSTALL,
    ),
}
"""Documented plugin commands: name -> (help, distribution, how to install it)."""
AUDIT_KNOWN = {
    "retriever": (
        "Run your own retriever through the eval (needs guardrail-eval).",
        "guardrail-eval",
        _EVAL_INSTALL,
    ),
}
"""Documented ``guardrail audit`` plugin commands, as `KNOWN`."""

Known = Mapping[str, tuple[str, str, str]]

# A stand-in takes whatever arguments were meant for the real command, and fails the same way.
_ANY_ARGUMENTS = {"allow_extra_args": True, "ignore_unknown_options": True}


def register_plugins(app: typer.Typer, group: str = GROUP, known: Known = KNOWN) -> None:
    """Mount every plugin of entry-point ``group`` on ``app`` (see the module docstring)."""
    taken = _names(app)
    for entry_point in entry_points(group=group):
        if entry_point.name in taken:
            continue
        taken.add(entry_point.name)
        try:
            plugin = entry_point.load()
        except Exception as exc:  # any error of a foreign import: the rest of the CLI must work
            error = f"{type(exc).__name__}: {exc}"
            _stand_in(app, entry_point.name, _broken(entry_point, group, error))
            continue
        if isinstance(plugin, typer.Typer):
            app.add_typer(plugin, name=entry_point.name)
        elif inspect.isfunction(plugin):
            app.command(entry_point.name)(plugin)
        else:
            what = f"it is a {type(plugin).__name__}, not a typer.Typer or a function"
            _stand_in(app, entry_point.name, _broken(entry_point, group, what))
    command = "guardrail" if group == GROUP else f"guardrail {app.info.name}"
    for name, (summary, distribution, install) in known.items():
        if name not in taken:
            problem = (
                f"`{command} {name}` needs the {distribution} package (no installed distribution"
                f" provides {name!r} in the entry-point group {group})"
            )
            _stand_in(app, name, (summary, problem, install))


def _names(app: typer.Typer) -> set[str]:
    """The names of the commands and groups ``app`` has already."""
    names = {group.name for group in app.registered_groups if group.name}
    for command in app.registered_commands:
        if command.name:
            names.add(command.name)
        elif command.callback is not None:
            names.add(command.callback.__name__.replace("_", "-"))
    return names


def _broken(entry_point: EntryPoint, group: str, error: str) -> tuple[str, str, str]:
    dist = entry_point.dist
    name = dist.name if dist is not None else "its distribution"
    source = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
    problem = (
        f"the plugin command {entry_point.name!r} ({entry_point.value} from {source}, entry-point"
        f" group {group}) cannot be loaded: {error}"
    )
    hint = f"reinstall or uninstall {name}; every other guardrail command works"
    return f"Unavailable: plugin {entry_point.value} cannot be loaded.", problem, hint


def _stand_in(app: typer.Typer, name: str, about: tuple[str, str, str]) -> None:
    summary, problem, hint = about

    @app.command(name, help=summary, context_settings=_ANY_ARGUMENTS, add_help_option=False)
    def unavailable() -> None:
        fail(problem, hint=hint, code=EXIT_BAD_INPUT)
