"""`Spec` parsing: everything is validated before anything runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from guardrail.errors import SpecError
from guardrail.spec import Spec, infer_entry_point


def test_python_tests_file_splits_setup_and_multiline_statements(tmp_path: Path) -> None:
    path = tmp_path / "tests.py"
    path.write_text(
        "import math\nfrom fractions import Fraction\n"
        "assert area(1) == math.pi\n"
        "try:\n    area(-1)\nexcept ValueError:\n    pass\n"
    )
    spec = Spec.from_file(path)
    assert spec.setup == "import math\nfrom fractions import Fraction"
    assert spec.tests == (
        "assert area(1) == math.pi",
        "try:\n    area(-1)\nexcept ValueError:\n    pass",
    )
    assert spec.entry_point == "area"


def test_json_tests_file(tmp_path: Path) -> None:
    path = tmp_path / "tests.json"
    path.write_text(json.dumps(["assert f(1) == 2", "assert f(0) == 1"]))
    assert Spec.from_file(path, "f").tests == ("assert f(1) == 2", "assert f(0) == 1")


def test_unparseable_test_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "tests.py"
    path.write_text("assert f(1) == 2\nassert f(2) ==\n")
    with pytest.raises(SpecError, match=r"tests\.py:2: tests do not parse"):
        Spec.from_file(path, "f")


def test_unparseable_json_test_names_the_test() -> None:
    with pytest.raises(SpecError, match="test 2 does not parse"):
        Spec.build(["assert f(1) == 2", "assert f(("], "f")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"not": "a list"}', "expected a JSON list of test strings"),
        ('["ok",\n', r"tests\.json:2: not valid JSON"),
        ("[1, 2]", "expected a JSON list of test strings"),
    ],
)
def test_bad_json_tests(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "tests.json"
    path.write_text(content)
    with pytest.raises(SpecError, match=message):
        Spec.from_file(path, "f")


def test_bad_entry_point_and_empty_test() -> None:
    with pytest.raises(SpecError, match="not a Python identifier"):
        Spec.build(["assert True"], "not valid")
    with pytest.raises(SpecError, match="test 1 is empty"):
        Spec.build(["  "], "f")


def test_only_imports_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "tests.py"
    path.write_text("import math\n")
    with pytest.raises(SpecError, match="no test statements"):
        Spec.from_file(path)


def test_entry_point_inference_skips_builtins_and_setup_names() -> None:
    assert infer_entry_point(["assert len(sorted(solve([3, 1]))) == 2"]) == "solve"
    assert (
        infer_entry_point(["assert helper(f(1)) == 2"], setup="def helper(x):\n    return x") == "f"
    )
    with pytest.raises(SpecError, match="cannot tell which function"):
        infer_entry_point(["assert len([1]) == 1"])


def test_sha256_depends_on_every_part() -> None:
    base = Spec.build(["assert f(1) == 1"], "f")
    assert base.sha256 == Spec.build(["assert f(1) == 1"], "f").sha256
    assert base.sha256 != Spec.build(["assert f(1) == 2"], "f").sha256
    assert base.sha256 != Spec.build(["assert f(1) == 1"], "f", setup="import os").sha256
    assert base.sha256 != Spec.build(["assert f(1) == 1"], "g").sha256


def test_a_spec_over_the_size_limit_is_a_spec_error_not_each_candidates() -> None:
    from guardrail.spec import MAX_SPEC_BYTES

    big = "assert f() == " + repr("x" * MAX_SPEC_BYTES)
    with pytest.raises(SpecError, match=f"a spec may take at most {MAX_SPEC_BYTES:,}"):
        Spec.build([big], "f")
    with pytest.raises(SpecError, match="a spec may take at most"):
        Spec.build(["assert f() == 1"], "f", setup="x = 1\n" * (MAX_SPEC_BYTES // 6 + 1))


@pytest.mark.parametrize(
    "test",
    ["assert f(" + "-" * 200_000 + "1) == 1", "assert f(x" + ".a" * 100_000 + ")"],
    ids=["unary_minus", "attributes"],
)
def test_tests_that_exhaust_the_parser_are_a_spec_error(test: str) -> None:
    with pytest.raises(SpecError, match="too deeply nested"):
        Spec.build([test], "f")
    with pytest.raises(SpecError, match="too deeply nested"):
        Spec.from_tests([test])
    with pytest.raises(SpecError, match="too deeply nested"):
        Spec.from_python(test + "\n")


def test_json_tests_nested_past_the_decoder_are_a_spec_error(tmp_path: Path) -> None:
    tests = tmp_path / "tests.json"
    tests.write_text("[" * 100_000 + "]" * 100_000)
    with pytest.raises(SpecError, match=r"tests\.json: not valid JSON: nested too deeply"):
        Spec.from_file(tests)


def test_doctest_tests_infer_what_their_examples_call_never_the_runner() -> None:
    tests = [
        "__doctest_example__('p = peekable([1, 2])')",
        "__doctest_example__('p.peek()', '1')",
    ]
    assert infer_entry_point(tests) == "peekable"
    assert Spec.from_tests(tests).entry_point == "peekable"
    with pytest.raises(SpecError, match="cannot tell"):  # the examples call nothing unbound
        infer_entry_point(["__doctest_example__('x = [1]')", "__doctest_example__('len(x)')"])
