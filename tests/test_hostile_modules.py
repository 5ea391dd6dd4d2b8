"""A hostile module in the indexed tree cannot get a wrong retrieved text verified.

Each folder of tests/snippets/hostile_modules holds a module ``sums.py`` whose ``sum_squares``
(a function, or a method of ``Summer``) is wrong (it sums the squares of 0..n-1) and whose other
code tries to make the tests call something correct instead: by switching the runner's checks
off, rebinding the name, swapping the function's code (at import, from a thread, on first call),
rebuilding it over other globals, a decorator, a metaclass, ``__build_class__``, a module or
class ``__getattr__``, a trace function, a builtin replaced in ``builtins``, an instance
``__dict__`` or a ``__getattribute__`` that serves the tests a function running the real method
and answering otherwise. The retrieved text
is the file's own definition, as an index stores it; none may come back ``verified``, and none
is blamed as ``failed`` where it was not the text that ran (``missing_context`` says so). The
honest modules
of tests/snippets/honest_modules verify with the correct text and fail with the wrong one, under
runc and gVisor alike.
"""

from __future__ import annotations

import ast
import functools
import textwrap
from pathlib import Path
from typing import Any

import pytest

from guardrail.context import context_metadata
from guardrail.jobs import PreparedJob, prepare_job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec
from guardrail.substitution import substitute
from guardrail.verdict import Reason, Status, Verdict

pytestmark = pytest.mark.docker

SNIPPETS = Path(__file__).parent / "snippets"
HOSTILE = sorted(p for p in (SNIPPETS / "hostile_modules").iterdir() if p.is_dir())
HONEST = sorted(p for p in (SNIPPETS / "honest_modules").iterdir() if p.is_dir())
WRONG, RIGHT = "range(n)", "range(n + 1)"
NAME = "sum_squares"
CALLS = {"sum_squares": "sum_squares({})", "Summer": "Summer().sum_squares({})"}
# A thread that swaps the code races the tests: the check catches the swap, or the wrong text
# itself ran and failed. Either way it is not verified.
RACING = {"swaps_the_code_from_a_thread", "changes_the_defaults_from_a_thread"}


def retrieved(folder: Path) -> tuple[str, str, Spec, dict[str, object]]:
    """The definition as an index stores it (decorators included), its qualified name, the
    spec that calls it, and its context metadata."""
    file = folder / "sums.py"
    source = file.read_text()
    tree = ast.parse(source)
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Summer"]
    within = classes[0] if classes else tree
    node = next(n for n in ast.walk(within) if isinstance(n, ast.FunctionDef) and n.name == NAME)
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    text = textwrap.dedent("\n".join(source.splitlines()[first - 1 : node.end_lineno])) + "\n"
    entry = "Summer" if classes else "sum_squares"
    call = CALLS[entry]
    checks = [(3, 14), (1, 1), (4, 30), (3, 14)]  # once more: a cache's hit runs nothing
    spec = Spec.build([f"assert {call.format(n)} == {want}" for n, want in checks], entry)
    qualified = "Summer.sum_squares" if classes else "sum_squares"
    return text, qualified, spec, {**context_metadata(file), "qualified_name": qualified}


def _verdicts(runtime: str, texts: list[tuple[str, Path]]) -> list[Verdict]:
    jobs = []
    for text, folder in texts:
        _, _, spec, metadata = retrieved(folder)
        prepared = prepare_job(text, spec, metadata)
        assert isinstance(prepared, PreparedJob), prepared
        jobs.append(prepared.job)
    with DockerSandbox(pool_size=1, timeout_s=5.0, runtime=runtime) as sandbox:
        return sandbox.run(jobs)


@pytest.fixture(scope="module")
def judged(sandbox_runtime: str) -> dict[str, Verdict]:
    """Every fixture's verdict under the runtime: each hostile module with its own (wrong) text,
    each honest one with its right text and with the wrong one."""
    texts = [(retrieved(folder)[0], folder) for folder in HOSTILE]
    for folder in HONEST:
        right = retrieved(folder)[0]
        texts += [(right, folder), (right.replace(RIGHT, WRONG), folder)]
    verdicts = _verdicts(sandbox_runtime, texts)
    names = [f.name for f in HOSTILE] + [f"{f.name}:{k}" for f in HONEST for k in ("r", "w")]
    return dict(zip(names, verdicts, strict=True))


def _answers(text: str, folder: Path | None = None) -> list[int]:
    """What the text answers to the tests' inputs: alone (a hostile module's text), or in its
    honest module (``folder``); run here, as both are our own fixtures."""
    namespace: dict[str, Any] = {"functools": functools}
    if folder is None:
        namespace["_fixed"] = lambda function: function  # the hostile decorator: none
        exec(text, namespace)
        function = namespace[NAME]
        return [function(None, n) if "(self" in text else function(n) for n in (3, 1, 4)]
    _, qualified, _, _ = retrieved(folder)
    exec(substitute((folder / "sums.py").read_text(), text, qualified).source, namespace)
    if "Summer" in namespace:
        return [namespace["Summer"]().sum_squares(n) for n in (3, 1, 4)]
    return [namespace[NAME](n) for n in (3, 1, 4)]


def test_every_hostile_module_holds_a_wrong_text_and_every_honest_one_a_right_one() -> None:
    assert len(HOSTILE) >= 20
    right = [14, 1, 30]
    assert all(_answers(retrieved(folder)[0]) != right for folder in HOSTILE)
    for folder in HONEST:
        text = retrieved(folder)[0]
        assert _answers(text, folder) == right
        assert _answers(text.replace(RIGHT, WRONG), folder) != right


@pytest.mark.parametrize("name", [folder.name for folder in HOSTILE])
def test_a_hostile_module_never_gets_its_wrong_text_verified(
    judged: dict[str, Verdict], name: str
) -> None:
    verdict = judged[name]
    assert verdict.status is not Status.VERIFIED, verdict
    if name in RACING and verdict.status is Status.FAILED:
        return  # the wrong text itself ran before the swap: rightly failed
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT), (
        verdict
    )
    assert "retrieved" in verdict.message, verdict.message


@pytest.mark.parametrize("name", [folder.name for folder in HONEST])
def test_an_honest_module_verifies_the_right_text_and_fails_the_wrong_one(
    judged: dict[str, Verdict], name: str
) -> None:
    right, wrong = judged[f"{name}:r"], judged[f"{name}:w"]
    assert right.status is Status.VERIFIED, right
    assert (wrong.status, wrong.reason) == (Status.FAILED, Reason.TESTS_FAILED), wrong


def test_a_builtin_the_module_binds_at_import_is_its_context(sandbox_runtime: str) -> None:
    """The module's own ``range`` (bound at import, as a package's own ``filter`` or every
    module's ``__name__``) is what the text runs with in the package: judged with it, right and
    wrong texts alike, never refused as if the text had been swapped."""
    folder = SNIPPETS / "context_modules" / "own_range"
    text, _, _, _ = retrieved(folder)
    right, wrong = _verdicts(
        sandbox_runtime, [(text, folder), (text.replace("n - 1", "n"), folder)]
    )
    assert right.status is Status.VERIFIED, right.message
    assert (wrong.status, wrong.reason) == (Status.FAILED, Reason.TESTS_FAILED), wrong.message


def test_a_definition_that_runs_only_in_a_doctest_class_statement_is_judged(
    sandbox_runtime: str,
) -> None:
    """A doctest example's ``class`` statement runs the definition (a class decorator): that
    counts as the tests running it, for the right text and its wrong twin alike."""
    file = SNIPPETS / "context_modules" / "decorates_a_doctest_class" / "boxes.py"
    source = file.read_text()
    text = source[source.index("def described") :]
    wrong = text.replace("type(self).__name__", "'object'")
    define = (
        "@described\nclass Box(object):\n    def __init__(self, size):\n        self.size = size"
    )
    spec = Spec.build(
        [
            f"__doctest_example__({define!r}, '')",
            "__doctest_example__('Box(3).describe()', \"'Box of 3'\")",
        ],
        "described",
    )
    metadata = {**context_metadata(file), "qualified_name": "described"}
    jobs = []
    for code in (text, wrong):
        prepared = prepare_job(code, spec, metadata)
        assert isinstance(prepared, PreparedJob), prepared
        jobs.append(prepared.job)
    with DockerSandbox(pool_size=1, timeout_s=5.0, runtime=sandbox_runtime) as sandbox:
        right_verdict, wrong_verdict = sandbox.run(jobs)
    assert right_verdict.status is Status.VERIFIED, right_verdict.message
    assert wrong_verdict.status is Status.FAILED, wrong_verdict.message


def test_a_partial_application_must_run_the_definition_when_it_is_called(
    sandbox_runtime: str,
) -> None:
    """``@curry``'s partial application is a wrapper in turn: the honest one verifies (and its
    wrong twin fails); one whose partial answers without running the definition is refused."""
    spec = Spec.build(
        ["assert scaled_sum(2)(3) == 12", "assert scaled_sum(1)(4) == 10"], "scaled_sum"
    )
    jobs = []
    for folder, change in (
        ("curried_partial", ""),
        ("curried_partial", "wrong"),
        ("curried_partial_forged", ""),
    ):
        file = SNIPPETS / "context_modules" / folder / "sums.py"
        source = file.read_text()
        text = source[source.index("@curry\ndef scaled_sum") :]
        if change:
            text = text.replace("range(n + 1)", "range(n)")
        prepared = prepare_job(
            text, spec, {**context_metadata(file), "qualified_name": "scaled_sum"}
        )
        assert isinstance(prepared, PreparedJob), prepared
        jobs.append(prepared.job)
    with DockerSandbox(pool_size=1, timeout_s=5.0, runtime=sandbox_runtime) as sandbox:
        honest, wrong, forged = sandbox.run(jobs)
    assert honest.status is Status.VERIFIED, honest.message
    assert wrong.status is Status.FAILED, wrong.message
    assert (forged.status, forged.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT), forged


def test_a_class_judged_whole_yields_the_tests_its_own_methods(sandbox_runtime: str) -> None:
    """With the class as the retrieved text (qualified name ``Summer``), a ``__getattribute__``
    the text itself writes still may not hand the tests anything but the class's own method
    (bound): one that runs it and answers otherwise is refused; an honest class verifies."""
    jobs = []
    for name in ("getattribute_calls_the_method_then_answers_otherwise", "honest_method"):
        kind = "honest_modules" if name.startswith("honest") else "hostile_modules"
        file = SNIPPETS / kind / name / "sums.py"
        source = file.read_text()
        text = source[source.index("class Summer") :]
        spec = Spec.build(
            [
                f"assert Summer().sum_squares({n}) == {n * (n + 1) * (2 * n + 1) // 6}"
                for n in (3, 1, 4)
            ],
            "Summer",
        )
        metadata = {**context_metadata(file), "qualified_name": "Summer"}
        prepared = prepare_job(text, spec, metadata)
        assert isinstance(prepared, PreparedJob), prepared
        jobs.append(prepared.job)
    with DockerSandbox(pool_size=1, timeout_s=5.0, runtime=sandbox_runtime) as sandbox:
        hostile, honest = sandbox.run(jobs)
    assert (hostile.status, hostile.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT), (
        hostile
    )
    assert "another function" in hostile.message, hostile.message
    assert honest.status is Status.VERIFIED, honest.message
