"""Module context for a package that reads its own distribution's metadata at import (humanize:
``importlib.metadata.version(__name__)``): name and version are shipped with the context."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from guardrail import roots
from guardrail.context import (
    build_job_context,
    context_from_metadata,
    context_metadata,
)
from guardrail.gate import Gate
from guardrail.roots import register_context_root
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

FIXTURE = Path(__file__).parent / "snippets" / "context"


def meta(root: Path, file: str, qualified_name: str) -> dict[str, object]:
    return {**context_metadata(root / file), "qualified_name": qualified_name}


STAMP = Path(__file__).parent / "snippets" / "distribution_metadata" / "stamp"
DOUBLE = "def double(x):\n    return 2 * x\n"
DOUBLE_WRONG = "def double(x):\n    return 2 + x\n"
DOUBLE_TESTS = Spec.build(["__doctest_example__('double(21)', '42')"], "double")
AGENT = """def user_agent(client):
    return f"{client} stamp/{importlib.metadata.version('stamp')}"
"""
AGENT_TESTS = Spec.build(
    ["__doctest_example__('user_agent(\"curl\")', \"'curl stamp/1.2.3'\")"], "user_agent"
)
PKG_INFO = "Metadata-Version: 2.1\nName: stamp\nVersion: 1.2.3\nSummary: secret words\n\nBody\n"
# Each way a source tree declares its distribution: file -> its text, package folder under root.
DECLARED = {
    "sdist, src layout": ({"PKG-INFO": PKG_INFO}, "src"),
    "sdist, flat": ({"PKG-INFO": PKG_INFO}, "."),
    "pyproject": ({"pyproject.toml": '[project]\nname = "stamp"\nversion = "1.2.3"\n'}, "src"),
    "poetry": ({"pyproject.toml": '[tool.poetry]\nname = "stamp"\nversion = "1.2.3"\n'}, "."),
    "setup.cfg": ({"setup.cfg": "[metadata]\nname = stamp\nversion = 1.2.3\n"}, "."),
    "dist-info": ({"src/stamp-1.2.3.dist-info/METADATA": PKG_INFO}, "src"),
    "egg-info": ({"src/Stamp.egg-info/PKG-INFO": PKG_INFO.replace("stamp", "Stamp")}, "src"),
}


def stamp_tree(base: Path, files: dict[str, str], under: str, *, indexed: bool = True) -> Path:
    """The stamp package at ``base/under`` (the sys.path root), ``files`` written at ``base``;
    ``base`` is a context root when ``indexed``, as ``guardrail index base`` makes it."""
    root = (base / under).resolve()
    shutil.copytree(STAMP, root / "stamp")
    for name, text in files.items():
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text(text)
    if indexed:
        register_context_root(base)
    return root


def stamp_payload(root: Path, file: str = "stamp/maths.py") -> dict[str, object]:
    context = context_from_metadata({**context_metadata(root / file), "qualified_name": "double"})
    assert context is not None
    return build_job_context(DOUBLE, context)


@pytest.mark.parametrize("layout", DECLARED)
def test_the_distribution_a_tree_declares_is_shipped_name_and_version_only(
    tmp_path: Path, layout: str
) -> None:
    files, under = DECLARED[layout]
    payload = stamp_payload(stamp_tree(tmp_path, files, under))
    name = "Stamp" if layout == "egg-info" else "stamp"
    assert payload["distributions"] == [{"name": name, "version": "1.2.3"}]
    assert "secret words" not in json.dumps(payload)  # nothing else of the file leaves the host


def test_the_folder_above_src_is_read_only_when_it_is_a_context_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(roots, "_REGISTERED", set())
    root = stamp_tree(tmp_path, {"PKG-INFO": PKG_INFO}, "src", indexed=False)
    assert "distributions" not in stamp_payload(root)  # only src was vouched for
    register_context_root(tmp_path)
    assert stamp_payload(root)["distributions"] == [{"name": "stamp", "version": "1.2.3"}]


@pytest.mark.parametrize(
    "files",
    [
        {},  # a checkout without metadata
        {"pyproject.toml": '[project]\nname = "stamp"\ndynamic = ["version"]\n'},  # hatch-vcs
        {"setup.cfg": "[metadata]\nname = stamp\nversion = attr: stamp.__version__\n"},
        {"pyproject.toml": "[project\nname = "},  # does not parse
        {"src/other-1.0.dist-info/METADATA": PKG_INFO.replace("stamp", "other")},  # not its own
    ],
)
def test_a_version_the_tree_does_not_state_is_not_guessed(
    tmp_path: Path, files: dict[str, str]
) -> None:
    assert "distributions" not in stamp_payload(stamp_tree(tmp_path, files, "src"))


def test_distribution_metadata_is_never_read_through_a_link(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "PKG-INFO").write_text(PKG_INFO)
    root = stamp_tree(tmp_path / "project", {}, "src")
    (tmp_path / "project" / "PKG-INFO").symlink_to(outside / "PKG-INFO")
    (root / "stamp-1.2.3.dist-info").symlink_to(outside, target_is_directory=True)
    assert "distributions" not in stamp_payload(root)


@pytest.mark.docker
def test_a_package_reading_its_own_version_is_judged_with_its_metadata(
    sandbox_runtime: str, tmp_path: Path
) -> None:
    """humanize's ``__version__ = importlib.metadata.version(__name__)``: with the sdist's
    PKG-INFO shipped the right text verifies and its wrong twin fails; in a tree that states no
    version the verdict says the distribution metadata is missing, never a module."""
    from guardrail.sandbox.docker import DockerSandbox

    sdist = stamp_tree(tmp_path / "sdist", {"PKG-INFO": PKG_INFO}, "src")
    checkout = stamp_tree(tmp_path / "checkout", {}, "src")
    at = {name: {**context_metadata(name / "stamp/maths.py")} for name in (sdist, checkout)}
    jobs = [
        (DOUBLE, DOUBLE_TESTS, {**at[sdist], "qualified_name": "double"}),
        (DOUBLE_WRONG, DOUBLE_TESTS, {**at[sdist], "qualified_name": "double"}),
        (AGENT, AGENT_TESTS, {**at[sdist], "qualified_name": "user_agent"}),
        (
            AGENT.replace("stamp/", "stamp "),
            AGENT_TESTS,
            {**at[sdist], "qualified_name": "user_agent"},
        ),
        (DOUBLE, DOUBLE_TESTS, {**at[checkout], "qualified_name": "double"}),
        # The module alone (its package's __init__ never runs): the version read at call time.
        (
            AGENT,
            AGENT_TESTS,
            {
                **context_metadata(checkout / "stamp/maths.py", checkout / "stamp"),
                "qualified_name": "user_agent",
            },
        ),
    ]
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        gate = Gate(sandbox, cache=False)
        verdicts = [
            gate.verify([code], spec, metadata=[metadata])[0] for code, spec, metadata in jobs
        ]
    right, wrong, agent, agent_wrong, unstated, at_call = verdicts
    assert (right.status, right.reason) == (Status.VERIFIED, Reason.PASSED), right.message
    assert (wrong.status, wrong.reason) == (Status.FAILED, Reason.TESTS_FAILED), wrong.message
    assert (agent.status, agent.reason) == (Status.VERIFIED, Reason.PASSED), agent.message
    assert agent_wrong.status is Status.FAILED, agent_wrong.message
    assert (unstated.status, unstated.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "metadata of distribution 'stamp'" in unstated.message, unstated.message
    assert "not shipped" not in unstated.message
    assert (at_call.status, at_call.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "distribution metadata" in at_call.message, at_call.message
