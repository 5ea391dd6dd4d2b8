"""Commands of other distributions come through the ``guardrail.commands`` entry-point group.

Every test runs ``guardrail`` in a fresh interpreter with real temporary distributions: a
``NAME-VERSION.dist-info`` folder (``METADATA``, ``entry_points.txt``) and its module on
``PYTHONPATH``, found by `importlib.metadata` like any installed package. One named
``guardrail-eval`` shadows the installed guardrail-eval's metadata (the first distribution of a
name on ``sys.path`` wins), so the shared virtualenv is never reinstalled or changed.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLUGIN = '''\
import typer

app = typer.Typer(help="A third party's commands.")
not_an_app = 42


@app.command()
def hello(name: str = "you") -> None:
    """Say hello."""
    print(f"hello {name}")
'''


def distribution(
    folder: Path,
    name: str,
    entry_points: dict[str, str],
    modules: dict[str, str] | None = None,
    *,
    groups: dict[str, dict[str, str]] | None = None,
) -> None:
    """A real (metadata-only) distribution ``name`` 1.0 in ``folder``, with its modules.

    ``entry_points`` are the ``guardrail.commands`` group's; ``groups`` adds other groups."""
    info = folder / f"{name.replace('-', '_')}-1.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n", encoding="utf-8"
    )
    sections = {"guardrail.commands": entry_points, **(groups or {})}
    text = "".join(
        f"[{group}]\n" + "".join(f"{key} = {value}\n" for key, value in points.items())
        for group, points in sections.items()
    )
    (info / "entry_points.txt").write_text(text, encoding="utf-8")
    for module, source in (modules or {}).items():
        (folder / f"{module}.py").write_text(source, encoding="utf-8")


def guardrail(folder: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """``guardrail ARGUMENTS`` in a fresh interpreter that sees the distributions in ``folder``."""
    path = [str(folder), str(ROOT), str(ROOT / "eval")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path), "COLUMNS": "200"}
    code = "import sys; from guardrail.cli.app import main; sys.argv[0] = 'guardrail'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, *arguments],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )


def one_line(text: str) -> str:
    return " ".join(text.split())


def test_a_plugin_distribution_adds_its_command_group(tmp_path: Path) -> None:
    distribution(tmp_path, "toy-plugin", {"toy": "toy_cli:app"}, {"toy_cli": PLUGIN})
    result = guardrail(tmp_path, "toy", "hello", "--name", "plugins")
    assert (result.returncode, result.stdout) == (0, "hello plugins\n"), result.stderr
    listing = guardrail(tmp_path, "--help")
    assert listing.returncode == 0
    assert "toy" in listing.stdout and "A third party's commands." in listing.stdout


def test_a_broken_plugin_is_named_and_the_rest_of_the_cli_works(tmp_path: Path) -> None:
    distribution(
        tmp_path,
        "broken-plugin",
        {"broken": "broken_cli:app", "wrong": "toy_cli:not_an_app", "toy": "toy_cli:app"},
        {"broken_cli": "import a_module_nobody_installed\n", "toy_cli": PLUGIN},
    )
    result = guardrail(tmp_path, "broken", "--pool", "x", "more")
    assert result.returncode == 2, result.stderr
    error = one_line(result.stderr)
    assert (
        "error: the plugin command 'broken' (broken_cli:app from broken-plugin 1.0, entry-point"
        " group guardrail.commands) cannot be loaded: ModuleNotFoundError: No module named"
        " 'a_module_nobody_installed'"
    ) in error
    assert "hint: reinstall or uninstall broken-plugin" in error
    wrong = guardrail(tmp_path, "wrong")
    assert wrong.returncode == 2
    assert "cannot be loaded: it is a int, not a typer.Typer or a function" in one_line(
        wrong.stderr
    )
    assert guardrail(tmp_path, "toy", "hello").stdout == "hello you\n"
    assert guardrail(tmp_path, "verify", "--help").returncode == 0
    listing = guardrail(tmp_path, "--help")
    assert listing.returncode == 0
    assert "Unavailable: plugin broken_cli:app cannot be loaded." in one_line(listing.stdout)


def test_a_plugin_cannot_replace_a_core_command(tmp_path: Path) -> None:
    distribution(tmp_path, "toy-plugin", {"verify": "toy_cli:app"}, {"toy_cli": PLUGIN})
    result = guardrail(tmp_path, "verify", "--help")
    assert result.returncode == 0
    assert "--tests" in result.stdout and "A third party's commands." not in result.stdout


def test_eval_comes_from_the_eval_distributions_entry_point(tmp_path: Path) -> None:
    declared = tomllib.loads((ROOT / "eval" / "pyproject.toml").read_text(encoding="utf-8"))
    entry_points = declared["project"]["entry-points"]["guardrail.commands"]
    assert entry_points == {"eval": "guardrail_eval.cli:app"}
    audits = declared["project"]["entry-points"]["guardrail.audit_commands"]
    assert audits == {"retriever": "guardrail_eval.audit_retriever:retriever"}
    groups = {"guardrail.audit_commands": audits}
    distribution(tmp_path / "installed", "guardrail-eval", entry_points, groups=groups)
    result = guardrail(tmp_path / "installed", "eval", "--help")
    assert result.returncode == 0, result.stderr
    assert "build-pool" in result.stdout and "--relabel" in result.stdout
    audit = guardrail(tmp_path / "installed", "audit", "retriever", "--help")
    assert audit.returncode == 0, audit.stderr
    assert "--retriever" in audit.stdout


def test_a_plugin_function_becomes_an_audit_subcommand(tmp_path: Path) -> None:
    groups = {"guardrail.audit_commands": {"hello": "toy_cli:hello"}}
    distribution(tmp_path, "toy-plugin", {}, {"toy_cli": PLUGIN}, groups=groups)
    result = guardrail(tmp_path, "audit", "hello", "--name", "audits")
    assert (result.returncode, result.stdout) == (0, "hello audits\n"), result.stderr


def test_without_the_eval_distribution_eval_says_what_to_install(tmp_path: Path) -> None:
    # guardrail-eval's metadata without the entry point: what an install of another version
    # (or none) gives. The core must then not have imported guardrail_eval at all.
    distribution(tmp_path, "guardrail-eval", {})
    result = guardrail(tmp_path, "eval", "--pool", "builtin")
    assert result.returncode == 2
    error = one_line(result.stderr)
    assert "`guardrail eval` needs the guardrail-eval package" in error
    assert "hint: install it with `pip install -e eval`" in error
    audit = guardrail(tmp_path, "audit", "retriever", "--retriever", "m:f")
    assert audit.returncode == 2
    error = one_line(audit.stderr)
    assert "`guardrail audit retriever` needs the guardrail-eval package" in error
    assert "guardrail.audit_commands" in error
    probe = (
        "import sys, guardrail.cli.app;"
        " print([m for m in sys.modules if m.split('.')[0] == 'guardrail_eval'])"
    )
    path = os.pathsep.join([str(tmp_path), str(ROOT), str(ROOT / "eval")])
    modules = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": path},
        timeout=120,
        check=True,
    )
    assert modules.stdout == "[]\n"


def imported_names(node: ast.AST) -> list[str]:
    """Modules ``node`` imports: an import statement, or a call naming one as a string."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom):
        return [node.module or ""]
    if isinstance(node, ast.Call):  # importlib.import_module("..."), __import__("...")
        return [
            arg.value
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        ]
    return []


def test_the_core_package_never_imports_the_eval_package() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}: {name}"
        for path in sorted((ROOT / "guardrail").rglob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        for name in imported_names(node)
        if name.split(".")[0] == "guardrail_eval"
    ]
    assert offenders == []
