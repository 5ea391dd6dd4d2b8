"""Commands from other distributions: the ``guardrail.commands`` entry-point group.

A distribution adds a command group ``guardrail NAME`` by declaring a `typer.Typer` app in its
``pyproject.toml`` (guardrail-eval adds ``guardrail eval`` this way)::

    [project.entry-points."guardrail.commands"]
    NAME = "package.module:app"

`register_plugins` mounts each with ``add_typer`` under its entry-point name, so the core package
imports no plugin by name. Rules:

- a plugin that cannot be loaded (its import raises, or the object is not a `typer.Typer`) never
  breaks the CLI: ``guardrail NAME`` becomes a stand-in that exits 2 naming the entry point, its
  distribution and the error, and every other command works;
- core commands cannot be replaced: a plugin named like one is not mounted; of two plugins with
  one name, the first found on ``sys.path`` is mounted;
- a command guardrail documents (`KNOWN`, ``eval``) has a stand-in when no distribution provides
  it, saying which to install.
"""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

import typer

from guardrail.cli.common import EXIT_BAD_INPUT, fail

__all__ = ["GROUP", "KNOWN", "register_plugins"]

GROUP = "guardrail.commands"
KNOWN = {
    "eval": (
        "Measure how often an agent acts on buggy code (needs guardrail-eval).",
        "guardrail-eval",
        "install it with `pip install -e eval` from a guardrail checkout",
    ),
}
"""Documented plugin commands: name -> (help, distribution, how to install it)."""

# A stand-in takes whatever arguments were meant for the real command, and fails the same way.
_ANY_ARGUMENTS = {"allow_extra_args": True, "ignore_unknown_options": True}


def register_plugins(app: typer.Typer) -> None:
    """Mount every plugin of `GROUP` on ``app`` (see the module docstring)."""
    taken = _names(app)
    for entry_point in entry_points(group=GROUP):
        if entry_point.name in taken:
            continue
        taken.add(entry_point.name)
        try:
            plugin = entry_point.load()
        except Exception as exc:  # any error of a foreign import: the rest of the CLI must work
            _stand_in(app, entry_point.name, _broken(entry_point, f"{type(exc).__name__}: {exc}"))
            continue
        if not isinstance(plugin, typer.Typer):
            what = f"it is a {type(plugin).__name__}, not a typer.Typer"
            _stand_in(app, entry_point.name, _broken(entry_point, what))
            continue
        app.add_typer(plugin, name=entry_point.name)
    for name, (summary, distribution, install) in KNOWN.items():
        if name not in taken:
            problem = (
                f"`guardrail {name}` needs the {distribution} package (no installed distribution"
                f" provides {name!r} in the entry-point group {GROUP})"
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


def _broken(entry_point: EntryPoint, error: str) -> tuple[str, str, str]:
    dist = entry_point.dist
    name = dist.name if dist is not None else "its distribution"
    source = f"{dist.name} {dist.version}" if dist is not None else "an unknown distribution"
    problem = (
        f"the plugin command {entry_point.name!r} ({entry_point.value} from {source}, entry-point"
        f" group {GROUP}) cannot be loaded: {error}"
    )
    hint = f"reinstall or uninstall {name}; every other guardrail command works"
    return f"Unavailable: plugin {entry_point.value} cannot be loaded.", problem, hint


def _stand_in(app: typer.Typer, name: str, about: tuple[str, str, str]) -> None:
    summary, problem, hint = about

    @app.command(name, help=summary, context_settings=_ANY_ARGUMENTS, add_help_option=False)
    def unavailable() -> None:
        fail(problem, hint=hint, code=EXIT_BAD_INPUT)
