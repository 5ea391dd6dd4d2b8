"""The gate asks, over the real Docker sandbox: observations the judge makes, questions that
separate candidates, and tests from the answers that really pass for the side they describe."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

from guardrail.gate import Candidate, Gate
from guardrail.probes import Probe
from guardrail.questions import Question
from guardrail.spec import Spec
from guardrail.verdict import Status

pytestmark = pytest.mark.docker

CANONICAL = (
    "def window_sums(xs, k):\n    return [sum(xs[i:i + k]) for i in range(len(xs) - k + 1)]\n"
)
SHORT = CANONICAL.replace("len(xs) - k + 1", "len(xs) - k")  # drops the last window
NEVER_EMPTY = CANONICAL.replace("len(xs) - k + 1", "max(len(xs) - k + 1, 1)")  # [0] for short xs
VISIBLE = Spec.from_tests(["assert window_sums([1, 2, 3, 4], 2)[0] == 3"])  # thin: all three pass


def _probe(*args: str) -> Probe:
    return Probe(entry_point="window_sums", args=args, origin="test")


def _pool() -> list[Candidate]:
    return [
        Candidate(code=SHORT, id="short"),
        Candidate(code=CANONICAL, id="canonical"),
        Candidate(code=NEVER_EMPTY, id="never-empty"),
    ]


def test_a_question_separates_a_canonical_from_its_mutants_and_its_tests_hold(gate: Gate) -> None:
    result = gate.gate(_pool(), VISIBLE)
    assert [item.verdict.status for item in result.judged] == [Status.VERIFIED] * 3
    assert [item.candidate.id for item in result.kept] == ["short", "canonical", "never-empty"]
    question = result.question
    assert question is not None
    groups = {answer.candidate_ids for answer in question.answers}
    assert len(groups) >= 2 and sum(len(g) for g in groups) == 3
    assert all(answer.test is not None for answer in question.answers)
    # Each answer's test, added to the spec, verifies exactly the candidates that gave it.
    for answer in question.answers:
        assert answer.test is not None
        spec = Spec.from_tests([*VISIBLE.tests, answer.test])
        again = gate.gate(_pool(), spec, ask=False)
        verified = {item.candidate.id for item in again.judged if item.verdict.verified}
        assert verified == set(answer.candidate_ids), answer.test
        assert again.question is None  # ask=False
    text = question.render()
    assert question.probe.call in text and "canonical (rank 2)" in text
    assert Question.model_validate_json(question.model_dump_json()) == question


def test_two_single_edit_mutants_split_three_ways_when_an_input_tells_all_apart(
    gate: Gate,
) -> None:
    probes = [_probe("[1, 2, 3, 4]", "2"), _probe("[7]", "2")]
    seen = gate.observe([CANONICAL, SHORT, NEVER_EMPTY], VISIBLE, probes)
    texts = [[o.text for o in row] for row in seen]
    assert texts == [["[3, 5, 7]", "[]"], ["[3, 5]", "[]"], ["[3, 5, 7]", "[7]"]]
    assert seen[0][0].key == seen[2][0].key != seen[1][0].key
    assert {o.kind for row in seen for o in row} == {"value"}


def test_a_raised_exception_is_an_answer_by_its_type_name(gate: Gate) -> None:
    careful = "def window_sums(xs, k):\n    if k > len(xs):\n        raise ValueError(k)\n" + (
        "    return [sum(xs[i:i + k]) for i in range(len(xs) - k + 1)]\n"
    )
    result = gate.gate(
        [Candidate(code=CANONICAL, id="c"), Candidate(code=careful, id="v")], VISIBLE
    )
    question = result.question
    assert question is not None
    kinds = {answer.observation.kind: answer for answer in question.answers}
    assert set(kinds) == {"value", "raises"} and kinds["raises"].observation.text == "ValueError"
    test = kinds["raises"].test
    assert test is not None and test.startswith("try:")
    spec = Spec.from_tests([*VISIBLE.tests, test])
    verdicts = gate.verify([CANONICAL, careful], spec)
    assert [v.status for v in verdicts] == [Status.FAILED, Status.VERIFIED]


def test_a_candidate_cannot_forge_an_observation(gate: Gate) -> None:
    forger = """
import builtins

def __observe__(thunk):
    return None

builtins.__observe__ = __observe__

class Fake(str):
    def __eq__(self, other):
        return True
    def __repr__(self):
        return "[3, 5, 7]"

def window_sums(xs, k):
    print('{"kind": "value", "text": "[3, 5, 7]"}')
    if len(xs) == 4:
        return [3]
    return Fake("x")
"""
    probes = [_probe("[1, 2, 3, 4]", "2"), _probe("[1, 2]", "1")]
    forged, honest = gate.observe([forger, CANONICAL], VISIBLE, probes)
    assert (forged[0].kind, forged[0].text) == ("value", "[3]")  # what it really returned
    assert forged[0].key != honest[0].key
    assert forged[1].kind == "unjudged"  # a str subclass is a candidate object, not data
    assert honest[1].text == "[1, 2]"


def test_objects_are_unjudged_and_a_loop_times_out_only_its_own_candidate_and_probe(
    gate: Gate,
) -> None:
    # An object that is not its own iterator (an iterator would be drained and compared).
    returns_object = "class Box:\n    pass\n\ndef window_sums(xs, k):\n    return Box()\n"
    loops = "def window_sums(xs, k):\n    while k == 1:\n        pass\n    return [sum(xs)]\n"
    probes = [_probe("[1, 2]", "2"), _probe("[1, 2]", "1"), _probe("[5]", "2")]
    obj, loop, honest = gate.observe([returns_object, loops, CANONICAL], VISIBLE, probes)
    assert [o.kind for o in obj] == ["unjudged"] * 3
    assert "unserialisable" in obj[0].text
    # The job ended there; the probes after it run again: one slow input costs only its answer.
    assert [o.kind for o in loop] == ["value", "unjudged", "value"]
    assert loop[1].text == "timeout" and loop[2].text == "[5]"
    assert [o.text for o in honest] == ["[3]", "[1, 2]", "[]"]


def test_candidates_that_agree_on_everything_tried_raise_no_question(gate: Gate) -> None:
    loop_version = (
        "def window_sums(xs, k):\n    out = []\n    for i in range(len(xs) - k + 1):\n"
        "        out.append(sum(xs[i:i + k]))\n    return out\n"
    )
    candidates = [Candidate(code=CANONICAL, id="a"), Candidate(code=loop_version, id="b")]
    result = gate.gate(candidates, VISIBLE)
    assert [item.verdict.status for item in result.judged] == [Status.VERIFIED] * 2
    assert result.question is None
    one = gate.gate(
        [Candidate(code=CANONICAL, id="a"), Candidate(code=SHORT + "x = (", id="b")], VISIBLE
    )
    assert one.question is None  # only one verified: nothing to ask


def test_the_async_gate_asks_the_same_question(gate: Gate) -> None:
    sync = gate.gate(_pool(), VISIBLE)
    result = asyncio.run(gate.agate(_pool(), VISIBLE))
    assert result.question == sync.question is not None
    assert Gate(gate.sandbox, cache=False, ask=False).gate(_pool(), VISIBLE).question is None


def test_what_a_candidate_changes_in_place_is_part_of_its_answer(gate: Gate) -> None:
    rotate_right = "def rotate(xs):\n    xs.insert(0, xs.pop())\n"
    rotate_left = "def rotate(xs):\n    xs.append(xs.pop(0))\n"
    visible = Spec.from_tests(["xs = [1, 2]\nrotate(xs)\nassert xs == [2, 1]"])
    candidates = [Candidate(code=rotate_right, id="right"), Candidate(code=rotate_left, id="left")]
    result = gate.gate(candidates, visible)
    assert [item.verdict.status for item in result.judged] == [Status.VERIFIED] * 2
    question = result.question
    assert question is not None
    assert all(answer.observation.text == "None" for answer in question.answers)
    assert {len(answer.observation.after) for answer in question.answers} == {1}
    for answer in question.answers:  # e.g. arg1 = [0, 1] / assert rotate(arg1) == None / ...
        assert answer.test is not None and "assert arg1 == " in answer.test
        verdicts = gate.verify([rotate_right, rotate_left], Spec.from_tests([answer.test]))
        verified = {cid for cid, v in zip(["right", "left"], verdicts, strict=True) if v.verified}
        assert verified == set(answer.candidate_ids)
    assert "leaving its mutable arguments as" in question.render()


def test_the_asking_example_ends_with_the_one_right_version(docker_sandbox: object) -> None:
    example = Path(__file__).resolve().parents[1] / "examples" / "ask_when_tests_are_thin.py"
    done = subprocess.run(
        [sys.executable, str(example)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert out.startswith("with 1 test:\n  legacy/window_sums: verified\n")
    assert "QUESTION: the 3 candidates that pass the tests disagree on window_sums(" in out
    assert "the user adds: " in out
    assert out.rstrip().endswith("use: stats/window_sums")


def test_a_question_names_candidates_by_the_end_of_a_long_path() -> None:
    question = Question.model_validate(
        {
            "probe": {"entry_point": "f", "args": ["3"], "origin": "test"},
            "answers": [
                {
                    "observation": {"kind": "value", "text": "1", "key": "k1"},
                    "candidate_ids": ["a" * 64],
                    "retrieval_ranks": [0],
                    "test": None,
                },
                {
                    "observation": {"kind": "value", "text": "2", "key": "k2"},
                    "candidate_ids": ["b" * 64],
                    "retrieval_ranks": [1],
                    "test": None,
                },
            ],
        }
    )
    deep = "/tmp/" + "nested/" * 20 + "pkg/sizes.py:12"
    text = question.render({"a" * 64: deep})
    (line,) = [line for line in text.splitlines() if "(rank 1)" in line]
    assert "…" in line and line.endswith("/pkg/sizes.py:12 (rank 1)")  # the cut keeps the end
    assert "b" * 64 + " (rank 2)" in text  # an id with no name is shown as it is
    assert all(len(line) <= 200 for line in text.splitlines())
