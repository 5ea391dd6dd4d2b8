"""The handles protocol driven through the runner's own candidate and judge processes (the
candidate forked here, the judge in this process) on a real channel, with job fields set by
hand (``bind``, ``context``): what the judge binds, imports and keeps of the candidate's module.
The same protocol in real containers: `test_handles`.
"""

from __future__ import annotations

import gc
import os
import socket
import sys
import time
from pathlib import Path
from typing import Any

from guardrail.sandbox.runner.candidate import candidate_serve
from guardrail.sandbox.runner.framing import pack_frame
from guardrail.sandbox.runner.judge import Judge

REGISTRY = (
    Path(__file__).resolve().parent / "snippets" / "judge" / "registry_module.py"
).read_text()


def _judge_here(code: str, tests: list[str], **job: Any) -> dict[str, Any]:
    """Run the runner's candidate (forked) and judge (here) on a real channel; the report."""
    judge_end, candidate_end = socket.socketpair()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        judge_end.close()
        try:
            candidate_serve(candidate_end.fileno())
        finally:
            os._exit(0)
    candidate_end.close()
    first = {"code": code, "entry_point": job.get("entry_point", "f"), "bind": job.get("bind")}
    if job.pop("ship", False):  # the candidate loads its module from the context's sources
        first["context"] = job["context"]
    judge_end.sendall(pack_frame(first))
    full = {"code": code, "tests": tests, "setup": "", "entry_point": "f", **job}
    stdout = sys.stdout
    try:
        return Judge(judge_end.fileno(), time.monotonic() + 10.0).run(full)
    finally:
        sys.stdout = stdout
        judge_end.close()
        os.kill(pid, 9)
        os.waitpid(pid, 0)
        gc.collect()  # the stand-in classes (cycles) refuse repr: gone before another test looks


def test_bind_makes_the_tests_name_a_reference_to_the_candidates_global() -> None:
    """Two functions: no alias could be guessed; the host's ``bind`` decides."""
    report = _judge_here(
        "def first_true(xs):\n    return next(x for x in xs if x)\n\n"
        "def last_true(xs):\n    return first_true(xs[::-1])\n",
        ["assert first([0, 2, 3]) == 2 and first.__name__ == 'first_true'"],
        entry_point="first",
        bind={"first": "first_true"},
    )
    assert report["status"] == "verified", report


def test_a_context_package_imports_as_the_candidates_module_never_run_in_the_judge() -> None:
    """``import``/``from ... import`` of a package in the job's context gives the candidate's
    module (here a stdlib one the candidate changed at load: the judge's own copy lacks it)."""
    code = "import json\njson.MARKER = 42\n\ndef f():\n    return 1\n"
    context = {"module": "json", "modules": {"json": {"file": "json/__init__.py"}}}
    tests = [
        "import json\nassert json.MARKER == 42",
        "from json import MARKER, dumps\nassert MARKER == 42 and dumps([1]) == '[1]'",
        "import json.decoder\nassert json.decoder.JSONDecodeError.__name__ == 'JSONDecodeError'",
    ]
    report = _judge_here(code, tests, context=context)
    assert report["status"] == "verified", report
    assert "MARKER" not in vars(sys.modules["json"])
    without = _judge_here(code, tests[:1])  # no context: the judge's own json, no marker
    assert without["status"] == "failed", without


def test_with_context_a_missing_name_is_the_candidates_failure() -> None:
    context = {"module": "m", "modules": {}}
    tests = [
        "assert f(1) == 1",
        "try:\n    f(1)\nexcept NameError as e:\n    assert e.name == 'helper', e.name\n"
        "else:\n    raise AssertionError",
    ]
    report = _judge_here("def f(x):\n    return helper(x)\n", tests, context=context)
    assert report["status"] == "failed", report
    assert [t["outcome"] for t in report["tests"]] == ["ERROR:NameError", "pass"], report


def test_a_context_modules_mutable_global_is_one_object_under_both_names() -> None:
    """``from reg.core import REGISTRY`` (a doctest's setup) and the lazily read global are the
    same copy, kept in step with the candidate's module."""
    source = REGISTRY + "\n\ndef f():\n    return REGISTRY\n"

    def context(text: str) -> dict[str, Any]:
        return {
            "module": "reg.core",
            "modules": {
                "reg": {"file": "reg/__init__.py", "package": True, "source": ""},
                "reg.core": {"file": "reg/core.py", "package": False, "source": text},
            },
        }

    tests = [
        "from reg.core import REGISTRY as R\nregister('a')\n"
        "assert R == {'old': 0, 'a': 1} and R is REGISTRY and f() is R",
        "import reg.core\nregister('b')\n"
        "assert reg.core.REGISTRY is REGISTRY and REGISTRY['b'] == 1",
    ]
    report = _judge_here(source, tests, context=context(source), entry_point="register", ship=True)
    assert report["status"] == "verified", report
    wrong = source.replace("REGISTRY[name] = 1", "REGISTRY[name.upper()] = 1")
    report = _judge_here(wrong, tests, context=context(wrong), entry_point="register", ship=True)
    assert report["status"] == "failed", report


def test_with_context_the_tests_missing_import_is_a_missing_dependency() -> None:
    context = {"module": "m", "modules": {}}
    report = _judge_here(
        "def f(x):\n    return x\n",
        ["assert f(1) == 1"],
        context=context,
        setup="import numpy_not_in_the_image",
    )
    assert (report["status"], report["reason"]) == ("unverifiable", "missing_dependency"), report
