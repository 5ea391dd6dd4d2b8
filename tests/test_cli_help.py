"""Every ``--help`` of every command, the eval plugin's included, shows placeholders a person
reads (``--chroma-url CHROMA_URL``), never a Python type (``<str>``, ``<list[Path]>``); a list of
choices is shown as Typer shows it (``<list[none|minilm|bm25|all]>``).
"""

from __future__ import annotations

import re
from typing import Any

import typer.main
from typer.testing import CliRunner

from guardrail.cli.app import app

PYTHON_TYPE = re.compile(r"<(str|int|float|bool|path|file|list\[[^\]|]*\]|[a-z]+ range)>")


def command_paths() -> list[list[str]]:
    root = typer.main.get_command(app)
    context_class = type(root.make_context("guardrail", ["--help"], resilient_parsing=True))
    found: list[list[str]] = []

    def walk(command: Any, path: list[str], context: Any) -> None:
        found.append(path)
        for name in getattr(command, "list_commands", lambda _: [])(context):
            sub = command.get_command(context, name)
            walk(sub, [*path, name], context_class(sub, parent=context, info_name=name))

    walk(root, [], context_class(root, info_name="guardrail"))
    return found


def test_every_help_shows_placeholders_not_python_types() -> None:
    paths = command_paths()
    assert ["eval", "build-pool"] in paths and ["sandbox", "check"] in paths  # plugins too
    runner = CliRunner()
    offenders = {}
    for path in paths:
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "250"})
        assert result.exit_code == 0, (path, result.output)
        types = PYTHON_TYPE.findall(result.output)
        if types:
            offenders[" ".join(path) or "guardrail"] = sorted(set(types))
    assert offenders == {}


def test_options_are_named_as_argparse_names_them() -> None:
    result = CliRunner().invoke(app, ["index", "--help"], env={"COLUMNS": "250"})
    assert re.search(r"--chroma-url\s+CHROMA_URL", result.output), result.output
    assert re.search(r"--json\s+Print", result.output)  # a flag takes nothing: nothing shown
