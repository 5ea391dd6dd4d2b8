"""Module context: a snippet is judged inside its own module, and the retrieved text is what is
judged, even when the file changed since indexing.

The fixture package (tests/snippets/context/ctxpkg) only works as a package: helpers in another
module, a constant reached through ``from . import constants``, a sentinel default, a class whose
method uses a module constant, an ``__init__`` that re-exports, a module that imports a package
the sandbox image does not have.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from guardrail.cache import VerdictCache
from guardrail.context import (
    CodeContext,
    MissingContextError,
    build_job_context,
    context_from_metadata,
    context_metadata,
)
from guardrail.gate import Candidate, Gate
from guardrail.jobs import PreparedJob, prepare_job
from guardrail.precheck import MAX_PARSE_BYTES
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

FIXTURE = Path(__file__).parent / "snippets" / "context"

SCALE = """def scale(x, default=_MISSING):
    if x is None:
        return 0 if default is _MISSING else default
    return _double(x) * constants.FACTOR
"""
SCALE_MUTANT = SCALE.replace("* constants.FACTOR", "+ constants.FACTOR")
SCALE_TESTS = Spec.build(
    ["assert scale(2) == 12", "assert scale(None) == 0", "assert scale(None, 5) == 5"], "scale"
)
AREA = "def area(self):\n    return self.width * self.height\n"
AREA_MUTANT = "def area(self):\n    return self.width + self.height\n"
BOX_TESTS = Spec.build(["assert box_area(2, 3) == 6", "assert box_area(4, 5) == 20"], "Box")


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """A private copy of the fixture package (tests edit its files)."""
    root = tmp_path / "src"
    shutil.copytree(FIXTURE, root)
    return root


def meta(root: Path, file: str, qualified_name: str) -> dict[str, object]:
    return {**context_metadata(root / file), "qualified_name": qualified_name}


# -- host side: metadata and the payload -------------------------------------------------------


def test_context_metadata_finds_the_sys_path_root_above_the_outermost_package(tree: Path) -> None:
    assert context_metadata(tree / "ctxpkg" / "tools.py") == {
        "root": str(tree.resolve()),
        "file": "ctxpkg/tools.py",
        "module": "ctxpkg.tools",
    }
    assert context_metadata(tree / "ctxpkg" / "__init__.py")["module"] == "ctxpkg"
    (tree / "script.py").write_text("def f():\n    return 1\n")
    assert context_metadata(tree / "script.py")["module"] == "script"  # no package: its folder


def test_payload_ships_packages_and_what_the_imports_reach(tree: Path) -> None:
    context = context_from_metadata(meta(tree, "ctxpkg/tools.py", "scale"))
    assert context is not None
    payload = build_job_context(SCALE_MUTANT, context)
    modules = payload["modules"]
    assert payload["module"] == "ctxpkg.tools"
    # The package __init__, and relative imports transitively (the __init__ imports shapes,
    # which imports constants); remote.py is imported by nothing and is not shipped.
    assert set(modules) == {
        "ctxpkg",
        "ctxpkg.tools",
        "ctxpkg.helpers",
        "ctxpkg.constants",
        "ctxpkg.shapes",
    }
    assert modules["ctxpkg"]["package"] is True
    target = modules["ctxpkg.tools"]["source"]
    assert "+ constants.FACTOR" in target  # the candidate's text, not the file's
    assert "* constants.FACTOR" not in target
    assert "def first_true(" in target  # the rest of the module as it is


def test_a_method_is_substituted_into_its_class_reindented(tree: Path) -> None:
    context = context_from_metadata(meta(tree, "ctxpkg/shapes.py", "Box.area"))
    assert context is not None
    payload = build_job_context(AREA_MUTANT, context)
    source = payload["modules"]["ctxpkg.shapes"]["source"]
    assert "    def area(self):\n        return self.width + self.height\n" in source
    assert "self.width * self.height" not in source
    assert payload["judged"]["name"] == "Box.area"


def test_a_method_whose_class_is_gone_is_missing_context(tree: Path) -> None:
    context = context_from_metadata(meta(tree, "ctxpkg/shapes.py", "Crate.area"))
    assert context is not None
    with pytest.raises(MissingContextError, match="class 'Crate' is gone"):
        build_job_context(AREA, context)


def test_a_function_gone_from_the_file_is_appended(tree: Path) -> None:
    context = context_from_metadata(meta(tree, "ctxpkg/tools.py", "triple"))
    assert context is not None
    payload = build_job_context("def triple(x):\n    return _double(x) + x\n", context)
    assert payload["modules"]["ctxpkg.tools"]["source"].rstrip().endswith("return _double(x) + x")


def test_code_too_large_for_the_host_to_parse_is_never_parsed_there(tree: Path) -> None:
    """Over 256 KiB the host does not parse a candidate (a nesting bomb there would crash it):
    alone it runs as it is, under the tests' own name; in its module it cannot be placed."""
    spec = Spec.from_tests(["assert scale(2) == 4"])
    bomb = "#" * (MAX_PARSE_BYTES + 1) + "\n" + "-" * 200_000 + "1\n"
    alone = prepare_job(bomb, spec, None)
    assert isinstance(alone, PreparedJob) and alone.alias is None and alone.job.context is None
    placed = prepare_job(bomb, spec, meta(tree, "ctxpkg/tools.py", "scale"))
    assert not isinstance(placed, PreparedJob)
    assert placed.reason is Reason.MISSING_CONTEXT and "too large" in placed.message


def test_contexts_that_cannot_be_had_say_what_is_missing(tree: Path) -> None:
    gone = CodeContext(tree, "ctxpkg/nowhere.py", "ctxpkg.nowhere", "f")
    with pytest.raises(MissingContextError, match="cannot read the candidate's module"):
        build_job_context("def f():\n    return 1\n", gone)
    with pytest.raises(MissingContextError, match="no root is known"):
        context_from_metadata({"file": "ctxpkg/tools.py", "module": "ctxpkg.tools"})
    # A relative name with no root and no module is a label (hand-made snippets): no context.
    assert context_from_metadata({"file": "src/clamp.py", "qualified_name": "clamp"}) is None
    shadow = CodeContext(tree, "json.py", "json", "f")
    with pytest.raises(MissingContextError, match="standard-library"):
        build_job_context("def f():\n    return 1\n", shadow)
    assert context_from_metadata({"qualified_name": "scale"}) is None  # no file: self-contained
    assert context_from_metadata({"file": "notes/README.md"}) is None  # no Python module


def test_the_size_cap_refuses_required_modules_and_leaves_out_optional_ones(
    tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    context = context_from_metadata(meta(tree, "ctxpkg/tools.py", "scale"))
    assert context is not None
    full = build_job_context(SCALE, context)
    required = sum(
        len(str(full["modules"][name]["source"])) + 200 for name in ("ctxpkg", "ctxpkg.tools")
    )
    monkeypatch.setattr("guardrail.context.CONTEXT_BYTES", required)
    capped = build_job_context(SCALE, context)
    assert {"ctxpkg", "ctxpkg.tools"} <= set(capped["modules"]) < set(full["modules"])
    monkeypatch.setattr("guardrail.context.CONTEXT_BYTES", 100)
    with pytest.raises(MissingContextError, match="cannot take the context"):
        build_job_context(SCALE, context)


def test_the_cache_key_changes_when_a_helper_changes(tree: Path) -> None:
    metadata = meta(tree, "ctxpkg/tools.py", "scale")
    before = prepare_job(SCALE, SCALE_TESTS, metadata)
    (tree / "ctxpkg" / "helpers.py").write_text("def _double(x):\n    return x + x + 1\n")
    after = prepare_job(SCALE, SCALE_TESTS, metadata)
    assert isinstance(before, PreparedJob)
    assert isinstance(after, PreparedJob)
    assert before.digest is not None
    assert before.digest != after.digest
    cache = VerdictCache(":memory:")
    keys = {cache.key(SCALE, SCALE_TESTS, "sandbox", job.digest) for job in (before, after)}
    assert len(keys) == 2
    plain = prepare_job(SCALE, SCALE_TESTS, None)
    assert isinstance(plain, PreparedJob)
    assert plain.digest is None  # a job without context keeps its old cache key


# -- judged for real -----------------------------------------------------------------------------


@pytest.mark.docker
def test_correct_in_context_verified_mutant_failed_alone_missing_context(
    gate: Gate, tree: Path
) -> None:
    metadata = meta(tree, "ctxpkg/tools.py", "scale")
    right, mutant, alone = gate.verify(
        [SCALE, SCALE_MUTANT, SCALE], SCALE_TESTS, metadata=[metadata, metadata, None]
    )
    assert (right.status, right.reason) == (Status.VERIFIED, Reason.PASSED), right.message
    assert (mutant.status, mutant.reason) == (Status.FAILED, Reason.TESTS_FAILED)
    # Without its module the sentinel default cannot even be evaluated: not the code's fault.
    assert (alone.status, alone.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "_MISSING" in alone.message


@pytest.mark.docker
def test_an_old_collections_absolute_file_gives_the_context_inside_a_context_root(
    gate: Gate, tree: Path
) -> None:
    old = {"file": str((tree / "ctxpkg" / "tools.py").resolve()), "qualified_name": "scale"}
    (unknown,) = gate.verify([SCALE], SCALE_TESTS, metadata=[old])
    assert (unknown.status, unknown.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "not under any context root" in unknown.message
    trusting = Gate(gate.sandbox, cache=False, context_roots=[tree])
    (verdict,) = trusting.verify([SCALE], SCALE_TESTS, metadata=[old])
    assert verdict.status is Status.VERIFIED, verdict.message


@pytest.mark.docker
def test_a_stale_index_judges_the_retrieved_text_both_ways(gate: Gate, tree: Path) -> None:
    tools = tree / "ctxpkg" / "tools.py"
    original = tools.read_text()
    metadata = meta(tree, "ctxpkg/tools.py", "scale")
    tools.write_text(original.replace("* constants.FACTOR", "- 1000"))  # the file now broken
    (right_text,) = gate.verify([SCALE], SCALE_TESTS, metadata=[metadata])
    assert right_text.status is Status.VERIFIED, right_text.message
    tools.write_text(original)  # the file right again, the retrieved text broken
    (broken_text,) = gate.verify([SCALE_MUTANT], SCALE_TESTS, metadata=[metadata])
    assert broken_text.status is Status.FAILED


@pytest.mark.docker
def test_a_method_is_judged_in_its_class(gate: Gate, tree: Path) -> None:
    metadata = meta(tree, "ctxpkg/shapes.py", "Box.area")
    right, mutant = gate.verify([AREA, AREA_MUTANT], BOX_TESTS, metadata=[metadata] * 2)
    assert right.status is Status.VERIFIED, right.message
    assert mutant.status is Status.FAILED
    assert right.alias is None  # the class is the entry point, bound as itself


@pytest.mark.docker
def test_a_missing_third_party_package_is_missing_dependency(gate: Gate, tree: Path) -> None:
    code = "def double(x):\n    return 2 * x\n"
    spec = Spec.build(["assert double(2) == 4"], "double")
    (verdict,) = gate.verify([code], spec, metadata=[meta(tree, "ctxpkg/remote.py", "double")])
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.MISSING_DEPENDENCY)
    assert "'requests'" in verdict.message
    assert "guardrail sandbox build" in verdict.message  # and how to add it


@pytest.mark.docker
def test_a_changed_helper_does_not_reuse_the_cached_verdict(gate: Gate, tree: Path) -> None:
    metadata = meta(tree, "ctxpkg/tools.py", "scale")
    (first,) = gate.verify([SCALE], SCALE_TESTS, metadata=[metadata])
    assert first.status is Status.VERIFIED
    (again,) = gate.verify([SCALE], SCALE_TESTS, metadata=[metadata])
    assert again.cached
    (tree / "ctxpkg" / "helpers.py").write_text("def _double(x):\n    return x + x + 1\n")
    (changed,) = gate.verify([SCALE], SCALE_TESTS, metadata=[metadata])
    assert not changed.cached
    assert changed.status is Status.FAILED


@pytest.mark.docker
def test_gate_takes_contexts_from_candidate_metadata_and_context_root(
    docker_sandbox: object, tree: Path
) -> None:
    from guardrail.sandbox.docker import DockerSandbox

    assert isinstance(docker_sandbox, DockerSandbox)
    relative = {"file": "ctxpkg/tools.py", "module": "ctxpkg.tools", "qualified_name": "scale"}
    gate = Gate(docker_sandbox, cache=False, context_root=tree)
    result = gate.gate([Candidate(code=SCALE, metadata=relative)], SCALE_TESTS)
    assert result.kept[0].verdict.status is Status.VERIFIED


@pytest.mark.docker
def test_verify_stored_judges_each_snippet_in_its_module(gate: Gate, tree: Path) -> None:
    from guardrail.index import CodeIndex, load_embedding, split_tree
    from guardrail.index.stored import verify_stored

    index = CodeIndex(
        f"context-{tree.parent.name[-12:]}",
        ephemeral=True,
        embedding_function=load_embedding("minilm"),
    )
    index.replace_files(split_tree(tree).files)
    checks = {
        f"{check.snippet.module}:{check.snippet.qualified_name}": check
        for check in verify_stored(index, gate)
    }
    scale = checks["ctxpkg.tools:scale"]
    assert (scale.snippet.file, scale.snippet.module) == ("ctxpkg/tools.py", "ctxpkg.tools")
    # Its doctests need the sentinel, the helper and the constant of its package.
    assert scale.verdict.status is Status.VERIFIED, scale.verdict.message
    assert checks["ctxpkg.tools:first_true"].verdict.status is Status.VERIFIED
    # The wrappers' doctests are the ones their docstrings were copied from, in another module.
    for wrapper in ("ctxpkg.curried:scale", "ctxpkg.curried:first"):
        assert checks[wrapper].snippet.tests, wrapper
        assert checks[wrapper].verdict.status is Status.VERIFIED, checks[wrapper].verdict.message


@pytest.mark.docker
def test_a_wrapper_judged_by_a_copied_docstring_fails_when_wrong(gate: Gate, tree: Path) -> None:
    """``scale.__doc__ = ctxpkg.scale.__doc__``: the copied examples test the wrapper's text."""
    from guardrail.index import split_python_file

    (wrapper,) = [
        s for s in split_python_file(tree / "ctxpkg" / "curried.py") if s.qualified_name == "scale"
    ]
    spec = Spec.build(wrapper.tests, wrapper.entry_point, wrapper.setup)
    wrong = wrapper.code.replace("ctxpkg.scale(x) if", "ctxpkg.scale(x) + 1 if")
    assert wrong != wrapper.code
    metadata = meta(tree, "ctxpkg/curried.py", "scale")
    right, mutant = gate.verify([wrapper.code, wrong], spec, metadata=[metadata, metadata])
    assert (right.status, right.reason) == (Status.VERIFIED, Reason.PASSED), right.message
    assert (mutant.status, mutant.reason) == (Status.FAILED, Reason.TESTS_FAILED), mutant.message


@pytest.mark.docker
def test_a_job_whose_context_is_over_the_job_limit_is_missing_context(
    docker_sandbox: object,
) -> None:
    from guardrail.sandbox.base import Job
    from guardrail.sandbox.docker import MAX_JOB_BYTES, DockerSandbox

    assert isinstance(docker_sandbox, DockerSandbox)
    huge = {"file": "big.py", "package": False, "source": "#" * MAX_JOB_BYTES}
    context = {"module": "big", "modules": {"big": huge}, "judged": None}
    (verdict,) = docker_sandbox.run([Job(SCALE, SCALE_TESTS, context=context)])
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "module context" in verdict.message


def test_reindexing_an_old_collection_replaces_its_absolute_file_snippets(tree: Path) -> None:
    from guardrail.index import CodeIndex, Snippet, load_embedding, split_tree

    tools = str((tree / "ctxpkg" / "tools.py").resolve())
    index = CodeIndex(
        f"old-{tree.parent.name[-12:]}", ephemeral=True, embedding_function=load_embedding("minilm")
    )
    old = Snippet(code=SCALE, entry_point="scale", qualified_name="scale", file=tools)
    index.add([old])  # as collections were written before module contexts
    assert index.files() == {tools}
    split = split_tree(tree)
    index.replace_files({tools: split.files[tools]})
    stored = list(index.snippets())
    assert old.index_id not in {s.index_id for s in stored}  # found by its absolute file, gone
    assert {(s.file, s.module) for s in stored} == {("ctxpkg/tools.py", "ctxpkg.tools")}
    assert index.files() == {tools}
    source = Path(tools).read_text()
    Path(tools).write_text(source[: source.index("def first_true(")])
    index.replace_files({tools: split_tree(tree).files[tools]})  # found by root + relative file
    assert "first_true" not in {s.qualified_name for s in index.snippets()}


@pytest.mark.docker
def test_a_module_that_rebinds_the_name_later_is_missing_context(gate: Gate, tree: Path) -> None:
    """``f = _fast_f`` after the definition: the tests would call the module's other function,
    not the retrieved text, so nothing may be verified."""
    rebound = tree / "ctxpkg" / "rebound.py"
    rebound.write_text("def f(x):\n    return x\n\n\ndef _fast(x):\n    return x\n\n\nf = _fast\n")
    spec = Spec.build(["assert f(2) == 2"], "f")
    wrong = "def f(x):\n    return -x\n"
    (verdict,) = gate.verify([wrong], spec, metadata=[meta(tree, "ctxpkg/rebound.py", "f")])
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "rebound" in verdict.message


TALLY = '''
from .constants import FACTOR


class Tally:
    """Counts things."""

    def __init__(self, items):
        self.items = list(items)

    def total(self):
        """The items' sum, scaled by the package's factor.

        >>> t = make_tally([1, 2])
        >>> t.total() == 3 * FACTOR
        True
        """
        return sum(self.items) * FACTOR

    def __len__(self):
        """
        >>> len(Tally([1, 2, 3]))
        3
        """
        return len(self.items)

    def unused(self):
        """Never reached by its own example.

        >>> Tally([1]).items
        [1]
        """
        return None


def make_tally(items):
    return Tally(items)
'''


@pytest.mark.docker
def test_a_method_with_doctests_verifies_in_its_class_and_its_mutant_fails(
    gate: Gate, tree: Path
) -> None:
    from guardrail.index.snippet import decode_metadata
    from guardrail.index.splitter import split_python_file
    from guardrail.sources import resolve

    (tree / "ctxpkg" / "tally.py").write_text(TALLY)
    snippets = {s.qualified_name: s for s in split_python_file(tree / "ctxpkg" / "tally.py")}
    assert snippets["Tally.unused"].tests == []  # its example never reaches it
    total, length = snippets["Tally.total"], snippets["Tally.__len__"]
    assert (total.entry_point, length.entry_point) == ("make_tally", "Tally")
    codes = [
        total.code,
        total.code.replace("sum(self.items)", "max(self.items)"),
        length.code,
        length.code.replace("len(self.items)", "len(self.items) - 1"),
    ]
    owners = [total, total, length, length]
    candidates = [
        Candidate(code=code, metadata=decode_metadata(s.to_metadata()))
        for code, s in zip(codes, owners, strict=True)
    ]
    specs = [resolve(c).spec for c in candidates]
    verdicts = gate.verify(codes, specs, metadata=[c.metadata for c in candidates])
    assert [v.status for v in verdicts] == [
        Status.VERIFIED,
        Status.FAILED,
        Status.VERIFIED,
        Status.FAILED,
    ], [v.message for v in verdicts]


@pytest.mark.docker
def test_tests_that_import_the_function_from_its_own_module_judge_the_retrieved_text(
    gate: Gate, tree: Path
) -> None:
    """boltons ``wraps``: ``>>> from boltons.funcutils import wraps`` in its own docstring. In
    its own module the import is the candidate (the loader proves the name is the retrieved
    text), so it is judged, and a mutant whose file on disk is correct still fails."""
    spec = Spec.build(
        ["__doctest_example__('scale(2)', '12')"], "scale", "from ctxpkg.tools import scale"
    )
    metadata = meta(tree, "ctxpkg/tools.py", "scale")
    right, mutant = gate.verify([SCALE, SCALE_MUTANT], spec, metadata=[metadata, metadata])
    assert (right.status, right.reason) == (Status.VERIFIED, Reason.PASSED), right.message
    assert (mutant.status, mutant.reason) == (Status.FAILED, Reason.TESTS_FAILED), mutant
