"""Commands from other distributions: the ``guardrail.commands`` entry-point group (and
``guardrail.audit_commands`` for ``guardrail audit NAME``).

A distribution adds a command group ``guardrail NAME`` by declaring a `typer.Typer` app in its
``pyproject.toml``, or a single command by declaring its function (guardrail-eval adds
``guardrail eval`` and ``guardrail audit retriever`` this way)::

    [project.entry-points."guardrail.commands"]
    NAME = "package.module:app"

    [project.entry-points."guardrail.audit_commands"]
    NAME = "package.module:command_function"

Plugins load when their command is named, never at start: `PluginCommands` is the click group
class of a Typer app (``typer.Typer(cls=...)``) that lists every plugin's name and imports an
entry point only when ``guardrail NAME`` (or ``guardrail --help``, which shows each plugin's own
help) asks for it. ``guardrail search`` therefore imports no plugin, the eval's numpy included.
Rules:

- a plugin that cannot be loaded (its import raises, or the object is neither a `typer.Typer` nor
  a function) never breaks the CLI: ``guardrail NAME`` becomes a stand-in that exits 2 naming the
  entry point, its distribution and the error, and every other command works;
- core commands cannot be replaced: a plugin named like one is not mounted; of two plugins with
  one name, the first found on ``sys.path`` is mounted;
- a command guardrail documents (`KNOWN`: ``eval``; `AUDIT_KNOWN`: ``audit retriever``) has a
  stand-in when no distribution provides it, saying which to install.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar

import typer
import typer.core
import typer.main

from guardrail.cli.common import EXIT_BAD_INPUT, fail
from guardrail.cli.placeholders import add_placeholders

if TYPE_CHECKING:
    from importlib.metadata import EntryPoint

__all__ = ["AUDIT_GROUP", "AUDIT_KNOWN", "GROUP", "KNOWN", "PluginCommands"]

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


class PluginCommands(typer.core.TyperGroup):
    """A Typer group whose commands are imported when named: the core's (`core`) and plugins'.

    `core` maps a command name to ``"module:attribute"``: a `typer.Typer` (mounted as a group) or
    a ``register(app)`` function; plugins come from the entry-point group `plugin_group`, with
    `known` stand-ins. Subclass it with these set and pass the subclass as ``cls`` to
    `typer.Typer`; the app's own and the core commands always win over a plugin's name.
    """

    core: ClassVar[Mapping[str, str]] = {}
    plugin_group: ClassVar[str] = GROUP
    known: ClassVar[Known] = KNOWN

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        add_placeholders(self)  # the group's own options (--debug, --help) and its commands'

    # ``ctx`` is Typer's own (vendored) click Context; its class is not public API.
    def list_commands(self, ctx: Any) -> list[str]:
        names = [*super().list_commands(ctx), *self.core, *self._plugin_names()]
        return list(dict.fromkeys(names))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            return add_placeholders(command)
        holder = typer.Typer(add_completion=False)
        if cmd_name in self.core:
            module, _, attribute = self.core[cmd_name].partition(":")
            found = getattr(import_module(module), attribute)
            if isinstance(found, typer.Typer):
                holder.add_typer(found, name=cmd_name)
            else:
                found(holder)
        elif cmd_name in self._plugin_names():
            self._mount(holder, cmd_name)
        else:
            return None
        return add_placeholders(typer.main.get_group(holder).get_command(ctx, cmd_name))

    def _plugin_names(self) -> list[str]:
        found = [entry_point.name for entry_point in _entry_points(self.plugin_group)]
        return list(dict.fromkeys([*found, *self.known]))

    def _mount(self, holder: typer.Typer, name: str) -> None:
        """Put plugin ``name`` (or its stand-in) on ``holder``: the first entry point found wins."""
        entry_point = next(
            (point for point in _entry_points(self.plugin_group) if point.name == name), None
        )
        if entry_point is None:
            summary, distribution, install = self.known[name]
            command = "guardrail" if self.plugin_group == GROUP else f"guardrail {self.name}"
            problem = (
                f"`{command} {name}` needs the {distribution} package (no installed distribution"
                f" provides {name!r} in the entry-point group {self.plugin_group})"
            )
            _stand_in(holder, name, (summary, problem, install))
            return
        try:
            plugin = entry_point.load()
        except Exception as exc:  # any error of a foreign import: the rest of the CLI must work
            error = f"{type(exc).__name__}: {exc}"
            _stand_in(holder, name, _broken(entry_point, self.plugin_group, error))
            return
        if isinstance(plugin, typer.Typer):
            holder.add_typer(plugin, name=name)
        elif inspect.isfunction(plugin):
            holder.command(name)(plugin)
        else:
            what = f"it is a {type(plugin).__name__}, not a typer.Typer or a function"
            _stand_in(holder, name, _broken(entry_point, self.plugin_group, what))


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


def _entry_points(group: str) -> list[EntryPoint]:
    """The entry points of ``group``: read only when a plugin is named (importlib.metadata and
    the scan of every installed distribution cost a command that uses none)."""
    from importlib.metadata import entry_points

    return list(entry_points(group=group))
