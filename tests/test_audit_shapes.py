"""``guardrail audit`` on near-clones whose results are not plain values, for real (Docker).

shapelib (``tests/snippets/audit/shapes/``) holds, in three modules, copies of a generator
(``windows``), an infinite generator (``stepping``), an ``async def`` (``scaled``), instance
methods of classes built without arguments (``Ledger.running`` and its copies), methods of classes
that need a constructor argument (``Account.statement``), and an async generator (``ticks``). In
each family one copy has one line changed and one is harmless.

Done when: every changed copy is found, with the output the host's own Python gives (iterators
drained, coroutines run and marked awaited); no harmless copy is (an infinite generator is
neither a hang nor a false "differs"); every pair that cannot be compared is listed with its
reason in JSON, SARIF (validated) and HTML, never counted as compared.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import itertools
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sarif_check import validate_sarif
from typer.testing import CliRunner

from guardrail.audit.calling import accepts, callee_of
from guardrail.cli.app import app
from guardrail.probes import Probe
from guardrail.settling import DRAIN_LIMIT

SHAPES = Path(__file__).parent / "snippets" / "audit" / "shapes"
runner = CliRunner()


def _pair(item: dict[str, Any]) -> frozenset[str]:
    return frozenset(f"{s['module']}:{s['qualified_name']}" for s in (item["left"], item["right"]))


@pytest.fixture(scope="module")
def audited(
    tmp_path_factory: pytest.TempPathFactory, docker_sandbox: object
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """One audit of a copy of shapelib (tokens alone: what is tested here is the running)."""
    base = tmp_path_factory.mktemp("shapes")
    root = base / "src"
    shutil.copytree(SHAPES, root)
    patch = pytest.MonkeyPatch()
    patch.setenv("GUARDRAIL_CACHE_DIR", str(base / "cache"))
    patch.delenv("GUARDRAIL_CHROMA_URL", raising=False)
    try:
        out = base / "out"
        out.mkdir()
        result = runner.invoke(
            app,
            [
                "audit",
                str(root / "shapelib"),
                "--no-embedding",
                *("--json", str(out / "a.json"), "--sarif", str(out / "a.sarif")),
                *("--html", str(out / "a.html")),
            ],
        )
        assert result.exit_code == 1, result.output  # findings at --fail-on low
        report = json.loads((out / "a.json").read_text(encoding="utf-8"))
        report["_sarif"] = json.loads((out / "a.sarif").read_text(encoding="utf-8"))
        report["_html"] = (out / "a.html").read_text(encoding="utf-8")
        report["_output"] = result.output
        yield root, report
    finally:
        patch.undo()


CHANGED = {  # the pairs with one line changed, and what the changed side does
    frozenset({"shapelib.original:windows", "shapelib.copies:windows"}),
    frozenset({"shapelib.original:scaled", "shapelib.copies:scaled"}),
    frozenset({"shapelib.original:Ledger.running", "shapelib.copies:Book.running"}),
    frozenset({"shapelib.original:stepping", "shapelib.third:stepping"}),
}
HARMLESS = {
    frozenset({"shapelib.original:windows", "shapelib.third:windows"}),
    frozenset({"shapelib.original:stepping", "shapelib.copies:stepping"}),  # infinite, equal
    frozenset({"shapelib.original:scaled", "shapelib.third:scaled"}),
    frozenset({"shapelib.original:Ledger.running", "shapelib.third:Journal.running"}),
}


def _on_host(root: Path, side: dict[str, Any], given: dict[str, Any]) -> list[str]:
    """What the side does on the input in this process's Python: iterators drained as the
    audit drains them, coroutines run, methods called on a fresh instance."""
    sys.path.insert(0, str(root))
    try:
        module = importlib.import_module(side["module"])
        owner, _, name = side["qualified_name"].rpartition(".")
        function = getattr(getattr(module, owner)(), name) if owner else getattr(module, name)
        args = [eval(text) for text in given["args"]]
        value = function(*args)
        mark = " (awaited)" if inspect.iscoroutine(value) else ""
        if mark:
            value = asyncio.run(value)
        if iter(value) is value:
            items = list(itertools.islice(value, DRAIN_LIMIT + 1))
            ending = "exhausted" if len(items) <= DRAIN_LIMIT else f"more after {DRAIN_LIMIT}"
            return ["yields", f"{items[:DRAIN_LIMIT]!r} ({ending}){mark}"]
        return ["value", repr(value) + mark]
    finally:
        sys.path.remove(str(root))
        for loaded in [m for m in sys.modules if m.startswith("shapelib")]:
            del sys.modules[loaded]


@pytest.mark.docker
def test_changed_copies_are_found_with_what_each_side_really_does(
    audited: tuple[Path, dict[str, Any]],
) -> None:
    root, report = audited
    found = {_pair(f): f for f in report["findings"]}
    assert set(found) >= CHANGED
    assert not set(found) & HARMLESS  # run and compared, never a finding
    for pair in CHANGED:
        finding = found[pair]
        for side in ("left", "right"):
            output = finding[side]["output"]
            host = _on_host(root, finding[side], finding["input"])
            if "[cut]" in output["text"]:  # a long iterator: its prefix and ending agree
                assert host[0] == output["kind"] == "yields"
                assert host[1].endswith(output["text"].rpartition(" ")[2])
                assert host[1].startswith(output["text"].partition("... [cut]")[0])
            else:
                assert host == [output["kind"], output["text"]], (pair, side)
    windows = found[frozenset({"shapelib.original:windows", "shapelib.copies:windows"})]
    assert windows["severity"] == "high" and windows["input"]["origin"] == "test"
    assert {windows["left"]["output"]["text"], windows["right"]["output"]["text"]} == {
        "[(1, 2), (2, 3), (3, 4)] (exhausted)",
        "[(1, 2), (2, 3)] (exhausted)",
    }
    stepping = found[frozenset({"shapelib.original:stepping", "shapelib.third:stepping"})]
    assert {stepping["left"]["output"]["kind"], stepping["right"]["output"]["kind"]} == {"yields"}
    assert stepping["left"]["output"]["text"].endswith(f"(more after {DRAIN_LIMIT})")
    scaled = found[frozenset({"shapelib.original:scaled", "shapelib.copies:scaled"})]
    assert {scaled["left"]["output"]["text"], scaled["right"]["output"]["text"]} == {
        "[3, 6] (awaited)",
        "[4, 5] (awaited)",
    }


@pytest.mark.docker
def test_pairs_that_cannot_be_compared_are_listed_with_the_reason(
    audited: tuple[Path, dict[str, Any]],
) -> None:
    _, report = audited
    not_compared = {_pair(n): n for n in report["not_compared"]}
    ticks = not_compared[frozenset({"shapelib.original:ticks", "shapelib.copies:ticks"})]
    assert ticks["category"] == "async-generator"
    assert "async generator" in ticks["reason"]
    statement = not_compared[
        frozenset({"shapelib.original:Account.statement", "shapelib.copies:Wallet.statement"})
    ]
    assert statement["category"] == "not-observed"
    assert "cannot be built without arguments" in statement["reason"]
    assert "Account()" in statement["reason"] and "Wallet()" in statement["reason"]
    # Never compared, never a finding, and counted where the report says why.
    assert not set(not_compared) & {_pair(f) for f in report["findings"]}
    counts = report["counts"]
    assert sum(counts["pairs_not_run"].values()) == len(report["not_compared"])
    assert counts["pairs_run"] + len(report["not_compared"]) == counts["confirmed_pairs"]
    # Every report says so: SARIF notifications (valid 2.1.0), HTML, the table.
    sarif = report["_sarif"]
    validate_sarif(sarif)
    notes = sarif["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert len(notes) == len(report["not_compared"])
    assert all(n["descriptor"]["id"] == "GRA900" and len(n["locations"]) == 2 for n in notes)
    assert any("async generator" in n["message"]["text"] for n in notes)
    assert "not compared: ticks is an async generator" in report["_html"]
    assert "not compared" in report["_output"] and "async-generator" in report["_output"]


@pytest.mark.parametrize(
    ("code", "qualified_name", "expected"),
    [
        ("def f(x):\n    return x\n", "f", "f"),
        ("async def f(x):\n    return x\n", "f", "f"),
        ("def m(self, x):\n    return x\n", "K.m", "__guardrail_instance__(K).m"),
        ("@classmethod\ndef m(cls, x):\n    return x\n", "K.m", "K.m"),
        ("@staticmethod\ndef m(x):\n    return x\n", "K.m", "K.m"),
        ("@property\ndef m(self):\n    return 1\n", "K.m", "property"),
        ("async def g(n):\n    yield n\n", "g", "async-generator"),
        ("def m():\n    return 1\n", "K.m", "method"),  # no parameter to bind the instance to
        ("def m(self):\n    return 1\n", "A.B.m", "method"),
        ("x = 1\n", "x", "not-a-function"),
    ],
)
def test_how_each_shape_is_called(code: str, qualified_name: str, expected: str) -> None:
    callee = callee_of(code, qualified_name, qualified_name.rpartition(".")[2])
    assert (callee if isinstance(callee, str) else callee.expression) == expected
    if not isinstance(callee, str) and "self" in code:
        assert "self" not in callee.signature_code  # no input is generated for it


@pytest.mark.parametrize(
    ("code", "args", "kwargs", "expected"),
    [
        ("def f(a, b=1):\n    pass\n", ("1",), (), True),
        ("def f(a, b=1):\n    pass\n", ("1", "2", "3"), (), False),
        ("def f(a, b):\n    pass\n", ("1",), (), False),  # a required argument left out
        ("def f(a, b):\n    pass\n", ("1",), (("b", "2"),), True),
        ("def f(a, b):\n    pass\n", ("1",), (("a", "2"),), False),  # given twice
        ("def f(a, /, b):\n    pass\n", (), (("a", "1"), ("b", "2")), False),  # positional only
        ("def f(*xs, k):\n    pass\n", ("1", "2"), (), False),  # keyword-only k missing
        ("def f(*xs, k=0, **rest):\n    pass\n", ("1", "2"), (("z", "3"),), True),
    ],
)
def test_an_input_is_tried_only_where_it_binds(
    code: str, args: tuple[str, ...], kwargs: tuple[tuple[str, str], ...], expected: bool
) -> None:
    callee = callee_of(code, "f", "f")
    assert not isinstance(callee, str)
    probe = Probe(entry_point="f", args=args, kwargs=kwargs, origin="guess")
    assert accepts(callee, probe) is expected
