"""A document's metadata never decides on its own which host folder is read (`guardrail.roots`).

A hostile ``root``/``file`` (a planted corpus entry, a vector store filled by someone else) that
names a host folder nobody indexed is ``missing_context`` and nothing of it is read; a folder the
host vouched for (indexed, given to ``context_metadata``, configured) still gives the context.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from guardrail import roots
from guardrail.context import MissingContextError, context_from_metadata, context_metadata
from guardrail.gate import Gate
from guardrail.index import CodeIndex, SentenceTransformerEmbedding, split_tree
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

SECRET = "HOST-SECRET-7c1f"
# Prints every .py file next to it: whatever the host shipped shows up in the verdict's output.
EXFILTRATE = (
    "def double(x):\n"
    "    import pathlib, sys\n"
    "    for path in pathlib.Path(__file__).parent.rglob('*.py'):\n"
    "        print(path.read_text(), file=sys.stderr)\n"
    "    return 2 * x\n"
)
TESTS = Spec.build(["assert double(2) == 4"], "double")


@pytest.fixture
def untrusted(monkeypatch: pytest.MonkeyPatch) -> None:
    """A process that has vouched for no folder (the suite registers many)."""
    monkeypatch.setattr(roots, "_REGISTERED", set())
    monkeypatch.delenv(roots.ENV_VAR, raising=False)


def _host_package(base: Path) -> Path:
    """A folder on the host nobody indexed, holding a module and a secret beside it."""
    package = base / "private" / "secretpkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text("def double(x):\n    return 2 * x\n")
    (package / "settings.py").write_text(f"TOKEN = {SECRET!r}\n")
    return base / "private"


@pytest.mark.usefixtures("untrusted")
def test_a_stored_root_outside_every_context_root_is_refused(tmp_path: Path) -> None:
    root = _host_package(tmp_path)
    planted = {"root": str(root), "file": "secretpkg/tools.py", "qualified_name": "double"}
    with pytest.raises(MissingContextError, match="not under any context root"):
        context_from_metadata(planted)
    absolute = {"file": str(root / "secretpkg" / "tools.py")}
    with pytest.raises(MissingContextError, match="not under any context root"):
        context_from_metadata(absolute)
    # Configured by the caller: the gate's own roots, a folder above, or the environment.
    assert context_from_metadata(planted, context_roots=[root]) is not None
    assert context_from_metadata(planted, context_roots=[tmp_path]) is not None
    assert context_from_metadata(absolute, context_roots=[root]) is not None
    assert context_from_metadata(absolute, context_root=root) is not None


@pytest.mark.usefixtures("untrusted")
def test_roots_vouched_for_by_the_host_and_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _host_package(tmp_path)
    planted = {"root": str(root), "file": "secretpkg/tools.py"}
    monkeypatch.setenv(roots.ENV_VAR, f"/nonexistent:{root}")
    assert context_from_metadata(planted) is not None
    monkeypatch.delenv(roots.ENV_VAR)
    context_metadata(root / "secretpkg" / "tools.py")  # the caller computed it: vouched for
    assert context_from_metadata(planted) is not None


@pytest.mark.usefixtures("untrusted")
def test_a_file_climbing_out_of_a_trusted_root_is_refused(tmp_path: Path) -> None:
    root = _host_package(tmp_path)
    trusted = tmp_path / "trusted"
    trusted.mkdir()
    roots.register_context_root(trusted)
    for file in ("../private/secretpkg/tools.py", "a/../../private/secretpkg/tools.py"):
        with pytest.raises(MissingContextError, match="climbs out of its root"):
            context_from_metadata({"root": str(trusted), "file": file})
    with pytest.raises(MissingContextError, match="NUL"):
        context_from_metadata({"root": str(trusted), "file": "x\0.py"})
    # A link inside a trusted root naming an untrusted folder is resolved before the check.
    (trusted / "link").symlink_to(root)
    with pytest.raises(MissingContextError, match="not under any context root"):
        context_from_metadata({"root": str(trusted / "link"), "file": "secretpkg/tools.py"})


@pytest.mark.docker
@pytest.mark.usefixtures("untrusted")
def test_a_planted_root_ships_nothing_and_is_missing_context(gate: Gate, tmp_path: Path) -> None:
    root = _host_package(tmp_path)
    planted = {"root": str(root), "file": "secretpkg/tools.py", "qualified_name": "double"}
    (verdict,) = gate.verify([EXFILTRATE], TESTS, metadata=[planted])
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert SECRET not in verdict.model_dump_json()
    # The same document with its root configured: judged in its module (the module is read).
    trusting = Gate(gate.sandbox, cache=False, context_roots=[root])
    (judged,) = trusting.verify([EXFILTRATE], TESTS, metadata=[planted])
    assert judged.status is Status.VERIFIED, judged.message


def test_a_code_index_records_its_roots_for_every_process_that_opens_it(
    tmp_path: Path, minilm: SentenceTransformerEmbedding, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _host_package(tmp_path)
    name = f"roots-{uuid.uuid4().hex[:8]}"
    index = CodeIndex(name, path=tmp_path / "index", embedding_function=minilm)
    index.replace_files(split_tree(root).files)
    assert index.roots() == [str(root.resolve())]
    monkeypatch.setattr(roots, "_REGISTERED", set())  # as a new process
    assert roots.trusted_root(root) is None
    reopened = CodeIndex(name, path=tmp_path / "index", embedding_function=minilm, create=False)
    assert reopened.roots() == [str(root.resolve())]
    assert roots.trusted_root(root / "secretpkg") == (root / "secretpkg").resolve()


@pytest.mark.usefixtures("isolated_cli")
def test_guardrail_index_records_the_folder_it_walked_never_the_wider_sys_path_root(
    tmp_path: Path, minilm: SentenceTransformerEmbedding, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from guardrail.cli.app import app

    sdist = tmp_path / "stamp-1.0"
    package = sdist / "src" / "stamp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("def one():\n    return 1\n")
    (sdist / "PKG-INFO").write_text("Name: stamp\nVersion: 1.0\n")
    result = CliRunner().invoke(app, ["index", str(sdist), "--collection", "walked"])
    assert result.exit_code == 0, result.output
    index = CodeIndex("walked", embedding_function=minilm, create=False)
    assert index.roots() == [str(sdist.resolve())]
    # A package folder indexed alone (in a new process): its sys.path root is not trusted.
    monkeypatch.setattr(roots, "_REGISTERED", set())
    (sdist / "secret.py").write_text("TOKEN = 1\n")
    result = CliRunner().invoke(app, ["index", str(package), "--collection", "pkgonly"])
    assert result.exit_code == 0, result.output
    alone = CodeIndex("pkgonly", embedding_function=minilm, create=False)
    assert alone.roots() == [str(package.resolve())]


@pytest.mark.usefixtures("untrusted")
def test_what_the_caller_vouched_for_is_the_package_or_the_lone_file(tmp_path: Path) -> None:
    """The red team's case: vouching for one loose file must not trust its whole folder."""
    home = tmp_path / "home"
    (home / "work").mkdir(parents=True)
    (home / "scratch.py").write_text("def f():\n    return 1\n")
    (home / "work" / "secret.py").write_text("TOKEN = 'x'\n")
    context_metadata(home / "scratch.py")
    assert context_from_metadata({"root": str(home), "file": "scratch.py"}) is not None
    with pytest.raises(MissingContextError, match="not under any context root"):
        context_from_metadata({"root": str(home), "file": "work/secret.py"})
    root = _host_package(tmp_path / "proj")  # proj/private/secretpkg/{tools,settings}.py
    (root / "loose.py").write_text("X = 1\n")
    context_metadata(root / "secretpkg" / "tools.py")  # vouches for secretpkg, not root
    assert context_from_metadata({"root": str(root), "file": "secretpkg/settings.py"}) is not None
    with pytest.raises(MissingContextError, match="not under any context root"):
        context_from_metadata({"root": str(root), "file": "loose.py"})


@pytest.mark.docker
@pytest.mark.usefixtures("untrusted")
def test_a_module_outside_the_vouched_package_is_withheld_not_shipped(
    gate: Gate, tmp_path: Path
) -> None:
    root = _host_package(tmp_path)
    (root / "outside.py").write_text(f"TOKEN = {SECRET!r}\n")
    tools = root / "secretpkg" / "tools.py"
    tools.write_text("def double(x):\n    import outside\n    return 2 * x\n")
    metadata = {**context_metadata(tools), "qualified_name": "double"}
    code = "def double(x):\n    import outside\n    print(outside.TOKEN)\n    return 2 * x\n"
    (verdict,) = gate.verify([code], TESTS, metadata=[metadata])
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert SECRET not in verdict.model_dump_json()
