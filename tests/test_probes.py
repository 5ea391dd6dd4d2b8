"""Probes (inputs to ask about), equality keys and the choice of a question: pure host code."""

from __future__ import annotations

import ast

import pydantic
import pytest

from guardrail.probe_code import code_constants
from guardrail.probes import Probe, generate_probes
from guardrail.questions import answer_test, pick_question
from guardrail.sandbox.runner.observing import key_of
from guardrail.spec import Spec
from guardrail.verdict import Observation

WINDOW = Spec.from_tests(["assert window_sums([1, 2, 3, 4], 2) == [3, 5, 7]"])
DOCUMENTED = '''def window_sums(xs: list[int], k: int) -> list[int]:
    """Sums of each window.

    >>> window_sums([5, 5], 1)
    [5, 5]
    >>> total = window_sums(other, 2)
    """
    return [sum(xs[i:i + k]) for i in range(len(xs) - k + 1)]
'''


def test_probes_start_with_the_tests_calls_then_doctests_then_single_edits() -> None:
    probes = generate_probes(WINDOW, [DOCUMENTED], limit=40)
    assert [(p.origin, p.call) for p in probes[:2]] == [
        ("test", "window_sums([1, 2, 3, 4], 2)"),
        ("doctest", "window_sums([5, 5], 1)"),  # the non-literal example is left out
    ]
    calls = [p.call for p in probes]
    assert len(calls) == len(set(calls)) > 30
    assert {p.origin for p in probes[2:]} == {"mutation"}
    # Boundaries and single edits of each argument, both calls edited within the cap.
    for expected in (
        "window_sums([], 2)",
        "window_sums([1, 2, 3, 4], 0)",
        "window_sums([1, 2, 3], 2)",
        "window_sums([4, 3, 2, 1], 2)",
        "window_sums([5, 5], 0)",
    ):
        assert expected in calls
    assert generate_probes(WINDOW, [DOCUMENTED], limit=40) == probes  # deterministic
    assert len(generate_probes(WINDOW, [DOCUMENTED], limit=5)) == 5
    assert generate_probes(WINDOW, [DOCUMENTED], limit=0) == []


def test_strings_bools_and_dicts_are_edited_by_type() -> None:
    spec = Spec.from_tests(["assert fmt('ab', True, {'k': 1}) == 'x'"])
    calls = [p.call for p in generate_probes(spec, [], limit=100)]
    for expected in (
        "fmt('', True, {'k': 1})",
        "fmt('bb', True, {'k': 1})",  # one character changed
        "fmt('ba', True, {'k': 1})",  # reversed
        "fmt('abb', True, {'k': 1})",  # one added
        "fmt('ab', False, {'k': 1})",  # flag flipped
        "fmt('ab', True, {})",
        "fmt('ab', True, {'k': 0})",
        "fmt('ab', None, {'k': 1})",
    ):
        assert expected in calls, expected


def test_an_aliased_candidates_doctests_call_its_own_name() -> None:
    code = 'def wsum(xs, k):\n    """\n    >>> wsum([9], 1)\n    [9]\n    """\n'
    probes = generate_probes(WINDOW, [code], limit=3)
    assert ("doctest", "window_sums([9], 1)") in [(p.origin, p.call) for p in probes]


def test_type_hints_give_inputs_when_the_tests_have_no_literal_call() -> None:
    spec = Spec.from_tests(["xs = load()\nassert pick(xs, 1) == 3"], entry_point="pick")
    code = "def pick(xs: list[int], n: int, *, key: str | None = None) -> int:\n    return 0\n"
    probes = generate_probes(spec, [code], limit=12)
    assert {p.origin for p in probes} == {"type-hint"}
    calls = [p.call for p in probes]
    assert calls[0] == "pick([], 0)"
    assert "pick([1], 0)" in calls and "pick([], 1)" in calls and "pick([], 0, key='')" in calls
    # Unannotated and no literal call: guessed values of the common kinds, one varied at a time.
    guessed = generate_probes(spec, ["def pick(xs, n):\n    return 0\n"], limit=30)
    assert {p.origin for p in guessed} == {"guess"}
    calls = [p.call for p in guessed]
    assert calls[0] == "pick([3, 1, 2], [3, 1, 2])"
    assert {"pick([3, 1, 2], 2)", "pick('abc', [3, 1, 2])", "pick([], [3, 1, 2])"} <= set(calls)


def test_guesses_are_a_last_resort() -> None:
    partly = "def pick(xs: list[int], n):\n    return 0\n"  # one parameter has no hint
    spec = Spec.from_tests(["xs = load()\nassert pick(xs, 1) == 3"], entry_point="pick")
    assert {p.origin for p in generate_probes(spec, [partly])} == {"guess"}
    literal = Spec.from_tests(["assert pick([1, 2], 1) == 2"])
    origins = {p.origin for p in generate_probes(literal, ["def pick(xs, n):\n    return 0\n"])}
    assert "guess" not in origins and "test" in origins


def test_a_probe_holds_literals_only() -> None:
    with pytest.raises(pydantic.ValidationError, match="not a Python literal"):
        Probe(entry_point="f", args=("__import__('os').system('id')",), origin="test")
    with pytest.raises(pydantic.ValidationError, match="identifier"):
        Probe(entry_point="f", kwargs=(("a=1, b", "2"),), origin="test")
    probe = Probe(entry_point="f", args=("[1, 2]",), kwargs=(("k", "'x'"),), origin="test")
    assert probe.call == "f([1, 2], k='x')"
    assert Probe.model_validate_json(probe.model_dump_json()) == probe


def test_equality_keys_follow_equality() -> None:
    assert key_of(1) == key_of(1.0) == key_of(True)
    assert key_of({3, 1, 2}) == key_of(frozenset({1, 2, 3}))
    assert key_of({"a": 1, "b": 2}) == key_of({"b": 2, "a": 1})
    assert key_of(b"ab") == key_of(bytearray(b"ab"))
    assert key_of(0.5) != key_of(0.25)
    assert key_of([1, 2]) != key_of((1, 2))
    assert key_of("1") != key_of(1)
    assert key_of(range(0)) == key_of(range(3, 3))


def _value(value: object) -> Observation:
    return Observation(kind="value", text=repr(value), key=key_of(value))


def test_answer_tests_assert_literals_and_exceptions_and_nothing_else() -> None:
    probe = Probe(entry_point="f", args=("3",), origin="test")
    assert answer_test(probe, _value([1, "a"])) == "assert f(3) == [1, 'a']"
    cut = Observation(kind="value", text="[1, 2", key=key_of([1, 2, 3]))  # a capped text
    assert answer_test(probe, cut) is None
    forged = Observation(kind="value", text="[1, 2]", key=key_of([1, 2, 3]))
    assert answer_test(probe, forged) is None  # the text must be the value the key names
    assert (
        answer_test(probe, Observation(kind="value", text="frozenset({1})", key="0" * 64)) is None
    )
    assert answer_test(probe, Observation.unjudged("timeout")) is None
    raises = answer_test(probe, Observation(kind="raises", text="ValueError"))
    assert raises is not None and "except Exception as exc:" in raises
    custom = answer_test(probe, Observation(kind="raises", text="MyError"))
    assert custom is not None and "except BaseException as exc:" in custom
    namespace: dict[str, object] = {"f": lambda x: 1 / 0}
    with pytest.raises(AssertionError, match="raised ZeroDivisionError"):
        exec(raises, namespace)
    exec(answer_test(probe, Observation(kind="raises", text="ZeroDivisionError")) or "", namespace)


def test_an_observation_never_carries_a_malformed_key_or_a_raw_name() -> None:
    assert Observation(kind="value", text="1", key="not a sha").kind == "unjudged"
    named = Observation(kind="raises", text="Err\x1b[31m", key="raises:whatever")
    assert (named.text, named.key) == ("Err??31m", "raises:Err??31m")


def test_the_question_is_the_most_even_split_of_judged_answers() -> None:
    probes = [Probe(entry_point="f", args=(str(n),), origin="test") for n in range(4)]
    a, b, c = _value(1), _value(2), _value(3)
    unjudged = Observation.unjudged("timeout")
    observations = [  # candidate x probe
        [a, a, a, a],
        [a, b, b, unjudged],
        [a, b, c, unjudged],
        [a, a, c, b],
    ]
    question = pick_question(probes, observations, ["p", "q", "r", "s"], [0, 1, 2, 5])
    assert question is not None
    assert question.probe.call == "f(2)"  # a / b / c, c: the most even split of the four
    assert [ans.candidate_ids for ans in question.answers] == [("r", "s"), ("p",), ("q",)]
    assert [ans.retrieval_ranks for ans in question.answers] == [(2, 5), (0,), (1,)]
    assert question.answers[0].test == "assert f(2) == 3"
    # Unjudged answers do not count; ties go to the earliest probe.
    tie = pick_question(
        probes[:2], [[a, b], [b, a], [unjudged, unjudged]], ["p", "q", "r"], [0, 1, 2]
    )
    assert tie is not None and tie.probe.call == "f(0)"
    assert pick_question(probes, [[a, a, a, a], [a, a, a, a]], ["p", "q"], [0, 1]) is None
    assert pick_question(probes[:1], [[a], [unjudged]], ["p", "q"], [0, 1]) is None


def test_a_rendered_question_is_plain_capped_text() -> None:
    probe = Probe(entry_point="f", args=("'\\x1b[2J'",), origin="test")
    evil = Observation(kind="value", text=repr("\x1b]0;pwn\x07"), key=key_of("\x1b]0;pwn\x07"))
    question = pick_question([probe], [[evil], [_value(2)]], ["[bold]id\x1b[31m", "b\n2"], [0, 1])
    assert question is not None
    text = question.render()
    assert "\x1b" not in text and "\x07" not in text
    assert (
        "f('\\x1b[2J')" in text
        and "[bold]id\\x1b[31m (rank 1)" in text  # ranks shown 1-based
        and "b\\n2 (rank 2)" in text
    )
    assert "assert f('\\x1b[2J') == 2" in text


def test_a_rendered_answer_mentions_argument_states_only_when_they_changed() -> None:
    probe = Probe(entry_point="f", args=("[1, 2]",), origin="test")
    kept = Observation(kind="value", text="3", key=key_of((3, ([1, 2],))), after=("[1, 2]",))
    emptied = Observation(kind="value", text="3", key=key_of((3, ([],))), after=("[]",))
    question = pick_question([probe], [[kept], [emptied]], ["keeps", "empties"], [0, 1])
    assert question is not None
    lines = question.render().splitlines()
    (keeps,) = [line for line in lines if "keeps (rank 1)" in line]
    (empties,) = [line for line in lines if "empties (rank 2)" in line]
    assert "leaving" not in keeps
    assert "leaving its mutable arguments as []" in empties


def test_constant_expressions_names_and_loops_of_the_tests_are_seeds() -> None:
    spec = Spec.build(
        [
            "assert bits(2**40 - 1) == 40",
            "xs = list(range(4))\nassert page(xs, 2) == [2, 3]",
            "for n, want in EXPECTED.items():\n    assert bits(n) == want",
            "assert bits(10**10**9) == 0",  # too large to compute: not a seed
            "assert bits(len(open('/etc/passwd').read())) == 0",  # code, not a constant
        ],
        "bits",
        setup="EXPECTED = {0: 0, 7: 3, 8: 1, 9: 2}",
    )
    seeds = [p.call for p in generate_probes(spec, []) if p.origin == "test"]
    assert seeds == ["bits(1099511627775)", "bits(0)", "bits(7)", "bits(8)"]  # 3 loop items


def test_a_statement_sees_the_names_the_test_bound_before_it() -> None:
    spec = Spec.from_tests(["xs = [3, -1]\ninsertion_sort(xs)\nassert xs == [-1, 3]"])
    assert generate_probes(spec, [], limit=1)[0].call == "insertion_sort([3, -1])"


def test_parameters_left_to_their_defaults_are_passed_edited() -> None:
    spec = Spec.from_tests(["assert problems('abcdefgh') == []"])
    code = "def problems(pw, min_length=8, *, sep: str = '-', extra=None):\n    return []\n"
    calls = [p.call for p in generate_probes(spec, [code], limit=100)]
    for expected in ("problems('abcdefgh', min_length=7)", "problems('abcdefgh', sep='')"):
        assert expected in calls
    assert not any("extra=" in call for call in calls)  # a None default without a hint


def test_numbers_are_set_to_the_other_arguments_boundaries() -> None:
    spec = Spec.from_tests(["assert clamp(5, 0, 10) == 5"])
    calls = {p.call for p in generate_probes(spec, [], limit=200)}
    assert {"clamp(10, 0, 10)", "clamp(11, 0, 10)", "clamp(5, 0, 6)", "clamp(5, 4, 10)"} <= calls
    take = Spec.from_tests(["assert take([1, 2, 3], 1) == [1]"])
    assert {"take([1, 2, 3], 3)", "take([1, 2, 3], 4)"} <= {
        p.call for p in generate_probes(take, [], limit=200)
    }


def _calls(spec: Spec, codes: list[str], limit: int = 200) -> set[str]:
    return {p.call for p in generate_probes(spec, codes, limit=limit)}


BYTE = "def ok(n):\n    return 0 <= n < 255\n"


def test_numbers_are_probed_at_and_around_the_candidates_constants() -> None:
    spec = Spec.from_tests(["assert ok(7)"])
    assert {"ok(254)", "ok(255)", "ok(256)"} <= _calls(spec, [BYTE, BYTE.replace("<", "<=")])
    # The constants only some candidates have (where they differ) come first, within the cap.
    assert "ok(255)" in _calls(spec, [BYTE, BYTE.replace("255", "256")], limit=8)


def test_the_constants_where_candidates_differ_rank_first_and_docstrings_do_not_count() -> None:
    one = 'def f(x):\n    """Up to 99 items."""\n    return x % 4 == 0 and x > -1 and 7\n'
    two = one.replace("% 4", "% 100")
    found = code_constants([ast.parse(one), ast.parse(two)])
    assert found.numbers[:2] == (4, 100)  # contested, then compared (-1), then the rest
    assert found.numbers[2:] == (0, -1, 7)  # 99 is prose, and the 1 of -1 no constant
    assert 99 not in found.numbers
    assert found.texts == ()


def test_strings_are_probed_at_constant_lengths_digit_runs_and_string_constants() -> None:
    strong = "def strong(pw):\n    return len(pw) >= 8 and '@' in pw\n"
    calls = _calls(Spec.from_tests(["assert not strong('abc')"]), [strong, strong])
    assert {"strong('abcabca')", "strong('abcabcab')", "strong('abcabcabc')"} <= calls
    assert {"strong('@')", "strong('abc@')", "strong('a@bc')"} <= calls
    month = "def valid(d):\n    return 1 <= int(d[5:7]) <= 12\n"
    calls = _calls(Spec.from_tests(["assert valid('2020-01-15')"]), [month, month])
    assert {"valid('2020-12-15')", "valid('2020-13-15')", "valid('2020-01-12')"} <= calls


def test_lists_are_probed_with_constant_elements_and_lengths() -> None:
    code = "def top(xs):\n    return [x for x in xs if x > 10][:3]\n"
    calls = _calls(Spec.from_tests(["assert top([20, 5]) == [20]"]), [code, code])
    assert {"top([20, 5, 10])", "top([11, 5])", "top([20, 5, 20])"} <= calls
    tags = "def tagged(words):\n    return [w for w in words if w != 'skip']\n"
    assert "tagged([1, 'skip'])" not in _calls(Spec.from_tests(["tagged([1])"]), [tags, tags])
    assert "tagged(['a', 'skip'])" in _calls(Spec.from_tests(["tagged(['a'])"]), [tags, tags])


def test_an_empty_argument_takes_its_type_from_hints_and_other_calls() -> None:
    spec = Spec.from_tests(["assert largest([], 40) == []"])
    hinted = "def largest(xs: list[float], n: int) -> list[float]:\n    return []\n"
    assert "largest([1.5], 40)" in _calls(spec, [hinted])
    documented = 'def largest(xs, n):\n    """\n    >>> largest([7, 8], 1)\n    """\n'
    assert "largest([7, 8], 40)" in _calls(spec, [documented])


def test_empty_containers_are_filled_with_each_kind_of_element() -> None:
    calls = _calls(Spec.from_tests(["assert f([], {}) == 0"]), [])
    assert {"f(['a'], {})", "f([2, 1, 1], {})", "f([[1, 2], [3]], {})"} <= calls
    assert {"f([], {'a': 1})", "f([], {1: 'a'})"} <= calls


def test_sequences_are_probed_with_equal_sorted_and_negated_elements() -> None:
    calls = _calls(Spec.from_tests(["assert rank([3, 1, 2]) == [2, 0, 1]"]), [])
    assert {"rank([3, 1, 1, 2])", "rank([3, 3, 3])", "rank([1, 2, 3])"} <= calls
    assert "rank([-3, -1, -2])" in calls


def test_strings_are_probed_with_case_digits_punctuation_and_inner_spaces() -> None:
    calls = _calls(Spec.from_tests(["assert slug('abcd') == 'abcd'"]), [])
    expected = {"slug('ABCD')", "slug('ab cd')", "slug('abcd1')", "slug('abcd!')"}
    assert expected | {"slug('ab, cd')", "slug('abcdé')"} <= calls


def test_arguments_are_set_equal_to_each_other_and_list_elements_to_number_arguments() -> None:
    overlap = Spec.from_tests(["assert days('2024-01-01', '2024-01-10') == 10"])
    assert "days('2024-01-10', '2024-01-10')" in _calls(overlap, [])
    histogram = Spec.from_tests(["assert histogram([0.5, 1.5], 0, 3, 3) == [1, 1, 0]"])
    assert "histogram([3.0, 1.5], 0, 3, 3)" in _calls(histogram, [])


def test_a_large_number_stays_small_enough_to_build_with() -> None:
    calls = _calls(Spec.from_tests(["assert bits(6, 3) == 3"]), [])
    assert "bits(6, 1000)" in calls and not any("1000000" in call for call in calls)


def test_elements_are_set_to_the_candidates_constants_in_place() -> None:
    account = (
        "def run(ops):\n    for op, amount in ops:\n"
        "        if op == 'withdraw' and amount > 0:\n            return op\n"
    )
    spec = Spec.from_tests(["assert run([('deposit', 7), ('close', 0)]) is None"])
    calls = _calls(spec, [account, account.replace("> 0", ">= 0")])
    assert "run([('deposit', 7), ('withdraw', 7)])" in calls  # the first edited, put last
    assert "run([('withdraw', 7), ('close', 0)])" in calls
    turnstile = "def turn(events):\n    return events.count('coin') + events.count('push')\n"
    calls = _calls(Spec.from_tests(["assert turn(['push', 'push']) == 2"]), [turnstile] * 2)
    assert "turn(['coin', 'push'])" in calls


def test_a_range_argument_is_probed_as_its_list() -> None:
    spec = Spec.from_tests(["assert second(range(5)) == 1"])
    calls = _calls(spec, [])
    assert "second([0, 1, 2, 3, 4])" in calls  # the range itself has no literal to paste
    assert "second([1, 2, 3, 4])" in calls  # and the list is edited like any other
    doctested = 'def second(xs):\n    """\n    >>> second(range(3))\n    1\n    """\n'
    assert "second([0, 1, 2])" in _calls(Spec.from_tests(["assert second([7, 8])"]), [doctested])


def test_an_argument_is_set_to_the_members_of_a_container_argument() -> None:
    spec = Spec.from_tests(["assert lookup({'a': 1, 'b': 2}, 'x') is None"])
    calls = _calls(spec, [])
    assert {"lookup({'a': 1, 'b': 2}, 'a')", "lookup({'a': 1, 'b': 2}, 'b')"} <= calls
    assert "lookup({'b': 2}, 'b')" in calls  # a member of the container's first edit
    found = _calls(Spec.from_tests(["assert index_of([4, 5, 6], 9) == -1"]), [])
    assert {"index_of([4, 5, 6], 4)", "index_of([4, 5, 6], 6)", "index_of([5, 6], 5)"} <= found
    assert "has('abc', 'a')" in _calls(Spec.from_tests(["assert not has('abc', 'z')"]), [])
    # Only members of the other argument's type: a str is never set to an int element.
    assert "index_of([4, 5, 6], 'x')" not in found
    assert not any(
        "name([1, 2], 1" in call
        for call in _calls(Spec.from_tests(["assert name([1, 2], 'k')"]), [])
    )


def test_a_dict_argument_grows_by_one_entry() -> None:
    calls = _calls(Spec.from_tests(["assert total({'a': 1, 'b': 2}) == 3"]), [])
    grown = [c for c in calls if c.startswith("total({'a': 1, 'b': 2, ")]
    assert grown and all(ast.literal_eval(c[6:-1])["b"] == 2 for c in grown)
    assert generate_probes(Spec.from_tests(["total({(1, 2): 0})"]), [], seed=3) == (
        generate_probes(Spec.from_tests(["total({(1, 2): 0})"]), [], seed=3)
    )
