"""Module context from an untrusted tree: nothing outside the root is read into a job
(tests/snippets/hostile/indexed_tree, planted by the ``hostile_tree`` fixture)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardrail.context import (
    CodeContext,
    MissingContextError,
    build_job_context,
    context_from_metadata,
    context_metadata,
)
from guardrail.gate import Gate
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

FIXTURE = Path(__file__).parent / "snippets" / "context"


def meta(root: Path, file: str, qualified_name: str) -> dict[str, object]:
    return {**context_metadata(root / file), "qualified_name": qualified_name}


LEAK = (FIXTURE.parent / "hostile" / "indexed_tree" / "treepkg" / "leaks.py").read_text()


def _host_text_in(payload: object) -> bool:

    return HOST_FILE_TEXT_HINT in json.dumps(payload, ensure_ascii=False)


def test_links_out_of_the_root_are_never_read_into_the_context(hostile_tree: Path) -> None:
    context = context_from_metadata(meta(hostile_tree, "treepkg/leaks.py", "leak"))
    assert context is not None
    assert context.root == hostile_tree.resolve()
    payload = build_job_context(LEAK, context)
    assert not _host_text_in(payload)
    assert set(payload["modules"]) == {"treepkg", "treepkg.leaks"}  # no secret, no linked.mod
    assert {"treepkg.secret", "treepkg.linked"} <= set(payload["withheld"])  # and said so


@pytest.mark.parametrize(
    ("file", "module"),
    [
        ("treepkg/secret.py", "treepkg.secret"),  # a link to a host file
        ("treepkg/linked/mod.py", "treepkg.linked.mod"),  # through a linked folder
        ("treepkg/zero.py", "treepkg.zero"),  # /dev/zero
        ("treepkg/fifo.py", "treepkg.fifo"),  # would block for ever
        ("treepkg/../../host/secret.py", "treepkg.secret"),  # climbs out
    ],
)
def test_a_candidate_whose_file_leaves_the_root_is_missing_context(
    hostile_tree: Path, file: str, module: str
) -> None:
    context = CodeContext(hostile_tree, file, module, "leak")
    with pytest.raises(MissingContextError) as caught:
        build_job_context(LEAK, context)
    assert HOST_FILE_TEXT_HINT not in str(caught.value)


HOST_FILE_TEXT_HINT = "HOST-FILE-CONTENT"


def test_context_metadata_of_a_link_names_the_link_never_its_target(hostile_tree: Path) -> None:
    found = context_metadata(hostile_tree / "treepkg" / "secret.py")
    assert found == {
        "root": str(hostile_tree.resolve()),
        "file": "treepkg/secret.py",
        "module": "treepkg.secret",
    }


def test_a_linked_root_is_resolved_and_still_confines(hostile_tree: Path, tmp_path: Path) -> None:
    link = tmp_path / "linked-root"
    link.symlink_to(hostile_tree, target_is_directory=True)
    payload = build_job_context(
        LEAK, CodeContext(link, "treepkg/leaks.py", "treepkg.leaks", "leak")
    )
    assert set(payload["modules"]) == {"treepkg", "treepkg.leaks"}
    assert not _host_text_in(payload)


def test_a_module_that_exhausts_the_parser_is_shipped_unparsed(hostile_tree: Path) -> None:
    halve = (hostile_tree / "treepkg" / "uses_bomb.py").read_text()
    context = context_from_metadata(meta(hostile_tree, "treepkg/uses_bomb.py", "halve"))
    assert context is not None
    payload = build_job_context(halve, context)  # parses treepkg.bomb on the way: no MemoryError
    assert "treepkg.bomb" in payload["modules"]
    bomb = CodeContext(hostile_tree, "treepkg/bomb.py", "treepkg.bomb", "x")
    with pytest.raises(MissingContextError, match="does not parse"):
        build_job_context("def x():\n    return 1\n", bomb)


@pytest.mark.docker
def test_a_module_printing_what_was_shipped_never_shows_a_host_file(
    gate: Gate, hostile_tree: Path
) -> None:
    spec = Spec.build(["assert leak() == 'sealed'"], "leak")
    (verdict,) = gate.verify(
        [LEAK], spec, metadata=[meta(hostile_tree, "treepkg/leaks.py", "leak")]
    )
    # Its import of the planted link is no fault of the code: the module was withheld.
    assert (verdict.status, verdict.reason) == (Status.UNVERIFIABLE, Reason.MISSING_CONTEXT)
    assert "'treepkg.secret' of the candidate's package" in verdict.tests[0].detail
    assert "treepkg/leaks.py" in verdict.model_dump_json()  # it did print what was shipped
    assert not _host_text_in(verdict.model_dump(mode="json"))


@pytest.mark.docker
def test_only_modules_the_host_withheld_excuse_an_import_error(
    gate: Gate, hostile_tree: Path
) -> None:
    """The candidate cannot name its own excuse: an ImportError for a module the host did not
    withhold is the code's failure, as it would be in the package."""
    spec = Spec.build(["assert leak() == 'sealed'"], "leak")
    made_up = "def leak():\n    raise ImportError('gone', name='treepkg.elsewhere')\n"
    (verdict,) = gate.verify(
        [made_up], spec, metadata=[meta(hostile_tree, "treepkg/leaks.py", "leak")]
    )
    assert (verdict.status, verdict.reason) == (Status.FAILED, Reason.TESTS_FAILED)
