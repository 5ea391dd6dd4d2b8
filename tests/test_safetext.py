"""Candidate- and pool-controlled text is data: `guardrail.safetext`, verdicts, the CLI outputs.

The hostile candidate `snippets/hostile/escape_sequences_and_markup_in_output.py` runs in the real
sandbox; its exception type name, message and output carry Rich markup, OSC 0/8, CSI 2J, a
carriage return, a bidi override, a lone surrogate and a megabyte of text.
"""

from __future__ import annotations

import json
import random
import re
from pathlib import Path

import pytest
from rich.console import Console
from rich.table import Table
from typer.testing import CliRunner

from guardrail.cache import VerdictCache
from guardrail.cli.app import app
from guardrail.cli.common import console
from guardrail.safetext import (
    cell,
    clean,
    dumps_json,
    html,
    identifier,
    markdown,
    one_line,
)
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, TestOutcome, Verdict

SNIPPETS = Path(__file__).parent / "snippets"
HOSTILE_TEXT = SNIPPETS / "hostile" / "escape_sequences_and_markup_in_output.py"
SQUARE_TESTS = ["assert square(3) == 9", "assert square(-2) == 4"]
MARKUP = "[bold green]verified[/]"
NASTY = [
    MARKUP,
    "[/]",
    "\x1b]0;pwned\x07",
    "\x1b]8;;http://evil.example/\x1b\\click\x1b]8;;\x1b\\",
    "\x1b[2J\x1b[H",
    "line one\rverified",
    "\u202eelif\u202c \u2066x\u2069 \u200fmark\u200e \u061c",
    "lone \udc80 and \ud800 surrogates",
    "\x9b31m C1 \x85 NEL \x7f DEL \x00 NUL",
    "\u2028 separators \u2029",
    "tab\tand\nnewline",
    "ünïcödé ✓ 中文",
    "back\\slash \\x1b literal",
]
# Raw bytes that must never reach a terminal or a file from data.
RAW = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff]"
)
runner = CliRunner()


def _random_texts(count: int) -> list[str]:
    """Seeded random strings drawn from every code point class the helpers treat specially."""
    pool = [chr(c) for c in range(0xA0)]
    pool += [chr(c) for c in [0x061C, 0x200F, 0x202E, 0x2066, 0x2028, 0xD800, 0xDC80, 0xFFFF]]
    pool += list("abc [/]\\$`|<>&_*#-1.")
    rng = random.Random(20261201)
    return ["".join(rng.choice(pool) for _ in range(rng.randrange(0, 80))) for _ in range(count)]


# --- the helpers ------------------------------------------------------------------------------


@pytest.mark.parametrize("text", NASTY + _random_texts(300))
def test_clean_escapes_every_unsafe_character_and_is_idempotent(text: str) -> None:
    for helper, limit in [(clean, 40), (one_line, 40), (clean, 4000), (one_line, 4000)]:
        once = helper(text, limit)
        assert not RAW.search(once.replace("\n", "").replace("\t", "")), (helper, once)
        assert len(once) <= limit
        assert helper(once, limit) == once
        once.encode("utf-8")  # never raises: no surrogate survives
    assert "\n" not in one_line(text) and "\t" not in one_line(text)


def test_escapes_are_visible_and_safe_text_is_untouched() -> None:
    assert clean("\x1b]0;t\x07") == "\\x1b]0;t\\x07"
    assert clean("a\udc80b\u202ec\rd\x9b") == "a\\udc80b\\u202ec\\rd\\x9b"
    assert clean("keep\nlines\tand tabs ✓ [x]") == "keep\nlines\tand tabs ✓ [x]"
    assert one_line("a\nb\tc") == "a\\nb\\tc"


def test_long_text_is_capped_with_a_count_and_never_cut_inside_an_escape() -> None:
    capped = clean("x" * 1_000_000, 200)
    assert 190 <= len(capped) <= 200
    kept, marker = capped.split("\n")
    assert set(kept) == {"x"}
    assert marker == f"[... {1_000_000 - len(kept)} more characters]"
    escaped = one_line("\udc80" * 100, 50)
    body = escaped.split(" [...")[0]
    assert re.fullmatch(r"(\\udc80)+", body), escaped


def test_identifier_keeps_names_and_replaces_everything_else() -> None:
    assert identifier("ValueError") == "ValueError"
    assert identifier("pkg.MyError_2") == "pkg.MyError_2"
    assert identifier(MARKUP + "\x1b]0;x\x07\u202e") == "?bold?green?verified?????0?x??"
    assert identifier("") == "?"
    long = identifier("A" * 500)
    assert len(long) == 100 and long.endswith("...") and identifier(long) == long


def test_markdown_escapes_markup_html_math_and_table_pipes() -> None:
    text = markdown("a|b `code` $x^2$ <script>alert(1)</script> **bold** [l](u) &amp; _i_")
    assert "<" not in text and "|" not in text.replace("\\|", "")
    assert text == (
        "a\\|b \\`code\\` \\$x^2\\$ &lt;script>alert(1)&lt;/script> \\*\\*bold\\*\\*"
        " \\[l\\](u) &amp;amp; \\_i\\_"
    )
    assert markdown("# heading") == "\\# heading"
    assert markdown("1. list") == "1\\. list"
    assert markdown("> quote") == "\\> quote"
    assert markdown("two\nlines") == "two\\\\nlines"
    # What cannot start markup stays readable: intraword underscores, numbers, mid-line marks.
    plain = "fixture__toy-minilm 0.3333 +0.1 -> p = 1 #2"
    assert markdown(plain) == plain


def test_html_escapes_tags_quotes_and_controls() -> None:
    assert html('<script>"x"</script>\x1b') == "&lt;script&gt;&quot;x&quot;&lt;/script&gt;\\x1b"


def test_a_cell_is_never_markup() -> None:
    output = Console(width=200, record=True, force_terminal=False)
    table = Table("value")
    table.add_row(cell(MARKUP + " [/] \x1b[2J"))
    output.print(table)  # a "[/]" string cell would raise MarkupError
    text = output.export_text()
    assert MARKUP in text and "[/] \\x1b[2J" in text and "\x1b" not in text


def test_json_round_trips_every_string_and_always_encodes() -> None:
    data = {"ids": NASTY, "nested": {"\udc80key": ["\x9b", "\u202e"]}}
    text = dumps_json(data)
    text.encode("utf-8")
    assert not RAW.search(text.replace("\n", ""))
    assert json.loads(text) == data
    assert "ünïcödé ✓ 中文" in text  # readable: only unsafe characters are escaped
    ascii_text = dumps_json(data, ascii_only=True)  # what the CLI prints, for any stdout encoding
    assert ascii_text.isascii() and json.loads(ascii_text) == data


# --- verdicts and the cache -------------------------------------------------------------------


def _hostile_verdict() -> Verdict:
    return Verdict(
        status=Status.FAILED,
        reason=Reason.TESTS_FAILED,
        message="m\udc80" * 10_000,
        tests=(
            TestOutcome(
                test="assert f(1) == 1\x1b]0;x\x07",
                outcome="ERROR:" + MARKUP + "\udc80" + "A" * 500,
                detail="\u202e" * 5000,
            ),
        ),
        alias="f\x1b[2J",
        stdout="\udc80" * 100_000,
        stderr="\x1b[2J",
    )


def test_verdict_strings_are_stored_clean_capped_and_idempotent() -> None:
    verdict = _hostile_verdict()
    (outcome,) = verdict.tests
    assert re.fullmatch(r"ERROR:[\w.?]{1,100}", outcome.outcome), outcome.outcome
    assert outcome.outcome.startswith("ERROR:?bold?green?verified???")
    assert len(outcome.detail) <= 2000 and outcome.detail.startswith("\\u202e")
    assert outcome.test == "assert f(1) == 1\\x1b]0;x\\x07"
    assert verdict.alias == "f??2J"
    assert len(verdict.message) <= 4000 and len(verdict.stdout) <= 64_000
    assert "more characters]" in verdict.stdout
    revalidated = Verdict.model_validate_json(verdict.model_dump_json())
    assert revalidated == verdict
    assert Verdict.model_validate(verdict.model_dump()) == verdict


def test_outcome_words_other_than_the_known_ones_never_pass() -> None:
    for word in ["pass", "FAIL", "TIMEOUT", "ERROR:ValueError"]:
        assert TestOutcome(test="t", outcome=word).outcome == word
    assert TestOutcome(test="t", outcome="pass ").outcome == "ERROR:pass?"
    assert not TestOutcome(test="t", outcome="Pass").passed


def test_the_sqlite_cache_stores_and_returns_a_surrogate_bearing_verdict(tmp_path: Path) -> None:
    cache = VerdictCache(tmp_path / "verdicts.sqlite")
    verdict = _hostile_verdict()
    spec = Spec.from_tests(["assert f(1) == 1"])
    code = "def f(x):\n    return '\udc80'\n"  # the key hashes code that cannot be encoded either
    assert cache.put(code, spec, "sandbox", verdict)
    stored = cache.get(code, spec, "sandbox")
    cache.close()
    assert stored == verdict.model_copy(update={"cached": True})


# --- the CLI, with the real sandbox -----------------------------------------------------------


@pytest.fixture
def _cli(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(console, "width", 250)  # cells unfolded, so assertions read whole cells
    monkeypatch.chdir(tmp_path)


def _hostile_inputs(tmp_path: Path) -> list[str]:
    """The hostile candidate as a file and as JSONL rows whose ids forge a table row."""
    tests = tmp_path / "tests.json"
    tests.write_text(json.dumps(SQUARE_TESTS))
    rows = tmp_path / "rows.jsonl"
    lines = [
        {"code": "def square(x):\n    return x * x\n", "id": MARKUP + " \x1b]0;pwned\x07"},
        {"code": "def square(x):\n    return x + x\n", "id": "[/]\u202e\udc80"},
    ]
    rows.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return [str(HOSTILE_TEXT), str(rows), "--tests", str(tests)]


def _assert_terminal_safe(output: str) -> None:
    assert not RAW.search(output.replace("\n", "")), repr(RAW.search(output.replace("\n", "")))


@pytest.mark.docker
@pytest.mark.usefixtures("_cli")
def test_verify_table_shows_hostile_text_as_text(docker_sandbox: object, tmp_path: Path) -> None:
    result = runner.invoke(app, ["verify", *_hostile_inputs(tmp_path)])
    assert result.exit_code == 0, result.output
    _assert_terminal_safe(result.stdout)
    lines = result.stdout.splitlines()
    forged = next(line for line in lines if MARKUP in line)
    assert "\\x1b]0;pwned\\x07" in forged and "│ verified" in forged  # the honest candidate
    hostile = next(line for line in lines if HOSTILE_TEXT.name in line)
    # The runner already reduces the candidate's type name to identifier characters ("_").
    assert "│ failed" in hostile and "ERROR:_bold_green_v" in hostile
    assert "│ verified" not in hostile
    wrong = next(line for line in lines if "[/]\\u202e\\udc80" in line)
    assert "│ failed" in wrong


@pytest.mark.docker
@pytest.mark.usefixtures("_cli")
def test_verify_json_is_valid_and_capped_and_the_cache_keeps_the_verdicts(
    docker_sandbox: object, tmp_path: Path
) -> None:
    arguments = ["verify", *_hostile_inputs(tmp_path), "--json"]
    first = runner.invoke(app, arguments)
    assert first.exit_code == 0, first.output
    _assert_terminal_safe(first.stdout)
    rows = json.loads(first.stdout)
    assert [row["status"] for row in rows] == ["failed", "verified", "failed"]
    assert rows[1]["source"] == MARKUP + " \x1b]0;pwned\x07"  # JSON keeps ids exact, escaped
    hostile = rows[0]
    outcome = hostile["tests"][0]
    assert re.fullmatch(r"ERROR:[\w.?]{1,100}", outcome["outcome"]), outcome
    assert "\\x1b]0;pwned\\x07" in outcome["detail"] and "\\udc80" in outcome["detail"]
    assert "\\u202e" in outcome["detail"] and len(outcome["detail"]) <= 2000
    assert "\\x1b[2J" in hostile["stdout"] and "\\udc80" not in hostile["stdout"]
    assert "\\x1b]8;;http://evil.example/" in hostile["stderr"]
    # The batch's verdicts reached the SQLite cache: the second run touches no container.
    second = runner.invoke(app, arguments)
    assert second.exit_code == 0, second.output
    again = json.loads(second.stdout)
    assert [row["cached"] for row in again] == [True, True, True]
    assert [row["tests"] for row in again] == [row["tests"] for row in rows]


@pytest.mark.usefixtures("_cli")
def test_error_lines_quote_bad_input_as_text(tmp_path: Path) -> None:
    tests = tmp_path / (MARKUP + "\x1b]0;x\x07.json")  # "[bold green]verified[" / "]\x1b]0;x..."
    tests.parent.mkdir(parents=True)
    tests.write_text("[1, 2")
    result = runner.invoke(app, ["verify", str(HOSTILE_TEXT), "--tests", str(tests)])
    assert result.exit_code == 2, result.output
    _assert_terminal_safe(result.output)
    assert MARKUP in result.output and "\\x1b]0;x\\x07" in result.output


@pytest.mark.docker
@pytest.mark.usefixtures("_cli")
def test_sandbox_check_quotes_an_image_name_from_the_user_as_text(docker_sandbox: object) -> None:
    result = runner.invoke(app, ["sandbox", "check", "--image", "nosuch[/]\x1b]0;x\x07"])
    assert result.exit_code == 3, result.output  # the engine refuses the name; a "[/]" crashed Rich
    _assert_terminal_safe(result.output)
    assert "nosuch[/]" in result.stderr and "error:" in result.stderr
