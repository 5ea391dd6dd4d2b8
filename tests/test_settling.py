"""Results that are not plain values, settled in the judge before the gate compares them, over
the real Docker sandbox: generators drained, coroutines run, tuples of generators item by item;
what cannot be settled stays unjudged. The answers read in words, never as the judge's tags, and
an exhausted generator's test really tells the candidates apart."""

from __future__ import annotations

import pytest

from guardrail.gate import Candidate, Gate
from guardrail.probes import Probe
from guardrail.questions import Question, pick_question
from guardrail.settling import DRAIN_LIMIT, read
from guardrail.spec import Spec

pytestmark = pytest.mark.docker

UP_TO = "def count_up(n):\n    yield from range(n)\n"
PAST = "def count_up(n):\n    yield from range(n + 1)\n"  # one item too many
THIN = Spec.from_tests(["assert next(count_up(3)) == 0"])  # both pass it


def _probe(*args: str) -> Probe:
    return Probe(entry_point="count_up", args=args, origin="test")


def _asked(gate: Gate, codes: list[str], probe: Probe) -> Question:
    seen = gate.observe(codes, THIN, [probe])
    question = pick_question([probe], seen, [f"c{i}" for i in range(len(codes))], [0, 1])
    assert question is not None, seen
    return question


def test_generators_that_differ_get_a_question_whose_list_tests_tell_them_apart(
    gate: Gate,
) -> None:
    pool = [Candidate(code=UP_TO, id="up-to"), Candidate(code=PAST, id="past")]
    result = gate.gate(pool, THIN)
    assert [item.verdict.verified for item in result.judged] == [True, True]
    question = result.question
    assert question is not None  # before settling, both were unjudged objects: no question
    by_id = {answer.candidate_ids: answer for answer in question.answers}
    assert set(by_id) == {("up-to",), ("past",)}
    call = question.probe.call
    for answer in question.answers:
        assert answer.words.startswith("yields [")
        assert answer.test is not None and answer.test.startswith(f"assert list({call}) == [")
        # The answer's test, added to the spec, verifies exactly the candidate that gave it.
        again = gate.gate(pool, Spec.from_tests([*THIN.tests, answer.test]), ask=False)
        verified = {item.candidate.id for item in again.judged if item.verdict.verified}
        assert verified == set(answer.candidate_ids), answer.test
    text = question.render()
    assert "yields [" in text and "<guardrail" not in text and "drained" not in text
    dumped = question.model_dump(mode="json")  # what integrations hand over, with the words
    assert [a["words"] for a in dumped["answers"]] == [a.words for a in question.answers]
    assert Question.model_validate_json(question.model_dump_json()) == question


def test_an_infinite_generator_is_compared_by_its_prefix(gate: Gate) -> None:
    counting = "import itertools\n\ndef count_up(n):\n    return itertools.count(n)\n"
    by_hand = "def count_up(n):\n    while True:\n        yield n\n        n += 1\n"
    skipping = counting.replace("count(n)", "count(n, 2)")
    probe = _probe("3")
    same, other, differs = gate.observe([counting, by_hand, skipping], THIN, [probe])
    assert same[0].key == other[0].key != differs[0].key  # equal prefixes are equal
    words = read(same[0].text).words
    assert words.startswith("yields [3, 4, 5, 6") and words.endswith("and more")
    assert read(same[0].text).ending == "more"
    question = _asked(gate, [counting, skipping], probe)
    assert all(answer.test is None for answer in question.answers)  # a prefix, no one assert
    assert "(no ready-made test" in question.render()
    assert "<guardrail" not in words  # the judge cut the text: its words come from the tags
    assert DRAIN_LIMIT == 1000  # items drained before "more"


def test_a_coroutine_functions_result_is_compared_once_awaited(gate: Gate) -> None:
    doubles = "async def count_up(n):\n    return [n, n]\n"
    adds = "async def count_up(n):\n    return [n, n + 1]\n"
    question = _asked(gate, [doubles, adds], _probe("3"))
    assert {a.words for a in question.answers} == {
        "returns [3, 3] once awaited",
        "returns [3, 4] once awaited",
    }
    # A test's own asyncio.run cannot drive the candidate's coroutine: no ready-made test.
    assert all(answer.test is None for answer in question.answers)


def test_a_tuple_of_a_generator_and_a_value_is_compared_item_by_item(gate: Gate) -> None:
    pair = "def count_up(n):\n    return (x for x in range(n)), n\n"
    longer = pair.replace("range(n)", "range(n + 1)")
    question = _asked(gate, [pair, longer], _probe("2"))
    assert {a.words for a in question.answers} == {
        "returns (<iterator yielding [0, 1]>, 2)",
        "returns (<iterator yielding [0, 1, 2]>, 2)",
    }
    assert all(answer.test is None for answer in question.answers)
    listed = "def count_up(n):\n    return [iter(range(n)), iter([])]\n"
    (seen,) = gate.observe([listed], THIN, [_probe("2")])
    assert (
        read(seen[0].text).words == "returns [<iterator yielding [0, 1]>, <iterator yielding []>]"
    )


def test_a_generator_that_raises_first_is_the_calls_own_raise_and_later_is_its_ending(
    gate: Gate,
) -> None:
    checks = (
        "def count_up(n):\n    if n > 2:\n        raise ValueError(n)\n    yield from range(n)\n"
    )
    late = "def count_up(n):\n    yield 0\n    if n > 2:\n        raise KeyError(n)\n"
    early, after_one = gate.observe([checks, late], THIN, [_probe("3")])
    assert (early[0].kind, early[0].text) == ("raises", "ValueError")
    assert read(after_one[0].text).words == "yields [0] then raises KeyError"
    question = _asked(gate, [checks, late], _probe("3"))
    tests = {a.observation.kind: a.test for a in question.answers}
    assert tests["value"] is None  # items then a raise: no one assert says it
    # The raise test checks the first item too: a generator runs its body only then.
    eager = "def count_up(n):\n    if n > 2:\n        raise ValueError(n)\n    return iter([])\n"
    raising = Spec.from_tests([tests["raises"] or ""])
    verdicts = gate.verify([checks, eager, late, UP_TO], raising)
    assert [v.verified for v in verdicts] == [True, True, False, False]


def test_what_cannot_be_settled_stays_unjudged(gate: Gate) -> None:
    ticks = "async def count_up(n):\n    yield n\n"
    iterable = (  # iterable, but not its own iterator: an object the judge cannot observe
        "class Box:\n    def __iter__(self):\n        return iter([1])\n\n"
        "def count_up(n):\n    return Box()\n"
    )
    nested = "async def _g():\n    yield 1\n\ndef count_up(n):\n    return (_g(), n)\n"
    seen = gate.observe([ticks, iterable, nested, UP_TO], THIN, [_probe("2")])
    assert [row[0].kind for row in seen] == ["unjudged", "unjudged", "unjudged", "value"]
    assert "async generator" in seen[0][0].text and "async generator" in seen[2][0].text
    assert "unserialisable" in seen[1][0].text
    assert pick_question([_probe("2")], seen[:3], ["a", "b", "c"], [0, 1, 2]) is None
