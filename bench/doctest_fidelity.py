"""Fidelity of stored doctest tests: a stored test must never fail the real function in its module.

For each package directory given (an unpacked sdist's ``more_itertools/``, say), the host splits
the package as ``guardrail index`` does and extracts every function's and method's doctest tests
(`guardrail.index.doctest_tests`). Then, inside a sandbox container with no network (the
package's code is run, so never on the host), for each of those functions, each in a fresh fork of
a process that imported the real module:

* the standard library's doctest runner runs the object's own docstring on a copy of the
  module's globals (``doctest.DocTestRunner``, no option flags: what ``python -m doctest`` does);
* the extracted setup and tests run in order on another copy of the module's globals, with
  ``__doctest_example__`` from `guardrail.sandbox.runner.doctesting`, as the judge runs them.

Printed per package: functions with examples; those whose real doctest passes; of those, how many
have tests and how many pass them all; and every function whose tests fail although its real
doctest passes (a fidelity violation: must be none). ``--json FILE`` writes every row.
Usage: ``python bench/doctest_fidelity.py [--image TAG] [--json FILE] PACKAGE_DIR...``.
The first part needs the guardrail package; the part in the container (``--inner``) is stdlib only.
"""

from __future__ import annotations

import argparse
import doctest
import importlib
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

RUNNER = Path(__file__).resolve().parent.parent / "guardrail" / "sandbox" / "runner"
PER_FUNCTION_S = 20  # a doctest that runs longer than this counts as not passing


def extract(package: Path) -> list[dict[str, Any]]:
    """One row per function or method of ``package`` whose docstring has examples (host side)."""
    from guardrail.index import doctest_tests, split_tree

    rows = []
    root = package.resolve().parent
    for file, snippets in sorted(split_tree(package).files.items()):
        parts = Path(file).relative_to(root).with_suffix("").parts
        module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        for snippet in snippets:
            if ">>>" not in snippet.docstring:
                continue
            found = doctest_tests(snippet.docstring, snippet.entry_point, snippet.qualified_name)
            rows.append(
                {
                    "module": module,
                    "qualified_name": snippet.qualified_name,
                    "tests": found.tests,
                    "setup": found.setup,
                    "skipped": found.reasons,
                }
            )
    return rows


def run_in_container(image: str, package: Path, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Judge ``rows`` inside a network-less container that sees the package's sdist read-only."""
    root = package.resolve().parent
    with tempfile.TemporaryDirectory() as work:
        Path(work, "rows.json").write_text(json.dumps(rows))
        command = [
            "docker", "run", "--rm", "--network", "none", "--read-only", "--tmpfs", "/tmp",
            "-e", "PYTHONPATH=/src", "-e", "PYTHONDONTWRITEBYTECODE=1",
            "-v", f"{root}:/src:ro", "-v", f"{work}:/work:ro",
            "-v", f"{RUNNER}:/bench/guardrail_runner:ro",
            "-v", f"{Path(__file__).resolve()}:/bench/doctest_fidelity.py:ro",
            image, "python3", "/bench/doctest_fidelity.py", "--inner", "/work/rows.json",
        ]  # fmt: skip
        done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"the container run failed ({done.returncode}): {done.stderr[-2000:]}")
    judged: list[dict[str, Any]] = json.loads(done.stdout)
    return judged


def inner(rows_file: str) -> None:
    """In the container: judge every row both ways, each in a fresh fork; JSON rows on stdout."""
    sys.path.insert(0, "/bench")  # the runner package: doctesting imports its siblings
    doctesting = importlib.import_module("guardrail_runner.doctesting")
    rows = json.loads(Path(rows_file).read_text())
    for row in rows:
        try:
            importlib.import_module(row["module"])
        except Exception as exc:  # counted, not judged: neither way can run
            row["import_error"] = repr(exc)[:300]
    for row in rows:
        if "import_error" in row:
            continue
        row["real"] = _in_fork(lambda row=row: _real_doctest(row))
        row["ours"] = _in_fork(lambda row=row: _our_tests(row, doctesting.doctest_example))
    json.dump(rows, sys.stdout)


def _target(row: dict[str, Any]) -> tuple[Any, Any]:
    module = sys.modules[row["module"]]
    target: Any = module
    for part in row["qualified_name"].split("."):
        target = getattr(target, part)
    return module, target


def _real_doctest(row: dict[str, Any]) -> dict[str, Any]:
    module, target = _target(row)
    docstring = target.__doc__ if isinstance(target.__doc__, str) else ""
    test = doctest.DocTestParser().get_doctest(
        docstring, module.__dict__.copy(), row["qualified_name"], module.__file__, 0
    )
    runner = doctest.DocTestRunner(verbose=False, optionflags=0)
    failed, attempted = runner.run(test, out=lambda _text: None)
    return {"attempted": attempted, "failed": failed}


def _our_tests(row: dict[str, Any], doctest_example: Any) -> dict[str, Any]:
    module, _ = _target(row)
    namespace = module.__dict__.copy()
    namespace["__doctest_example__"] = doctest_example
    exec(compile(row["setup"], "<setup>", "exec"), namespace)
    outcomes = []
    for test in row["tests"]:
        try:
            exec(compile(test, "<test>", "exec"), namespace)
            outcomes.append("pass")
        except AssertionError as exc:
            outcomes.append(f"FAIL: {exc}"[:300])
        except Exception as exc:  # the judge's ERROR:<name>
            outcomes.append(f"ERROR: {exc!r}"[:300])
    return {"outcomes": outcomes}


def _in_fork(work: Any) -> dict[str, Any]:
    """``work()`` in a child process, so that no run sees state another one left."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        signal.alarm(PER_FUNCTION_S)
        try:
            done = work()
        except BaseException as exc:
            done = {"crashed": repr(exc)[:300]}
        with os.fdopen(write_end, "w") as out:
            json.dump(done, out)
        os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as answer:
        text = answer.read()
    os.waitpid(pid, 0)
    result: dict[str, Any] = {"crashed": "killed (time limit)"}
    if text:
        result = json.loads(text)
    return result


def summarise(package: str, rows: list[dict[str, Any]]) -> tuple[str, list[str]]:
    """One line of counts, and the names of the functions whose tests break fidelity."""
    real_pass = [r for r in rows if _real_passes(r)]
    with_tests = [r for r in real_pass if r["tests"]]
    all_pass = [r for r in with_tests if _ours_pass(r)]
    violations = [r["module"] + "." + r["qualified_name"] for r in with_tests if not _ours_pass(r)]
    lenient = [r for r in rows if not _real_passes(r) and r["tests"] and _ours_pass(r)]
    tests = sum(len(r["tests"]) for r in all_pass)
    line = (
        f"{package}: {len(rows)} functions with examples, real doctest passes {len(real_pass)};"
        f" of those {len(with_tests)} have tests, {len(all_pass)} pass all ({tests} tests),"
        f" violations {len(violations)}; real doctest fails but our tests pass: {len(lenient)};"
        f" not importable: {sum('import_error' in r for r in rows)}"
    )
    return line, violations


def _real_passes(row: dict[str, Any]) -> bool:
    real = row.get("real", {})
    return bool(real.get("attempted")) and real.get("failed") == 0


def _ours_pass(row: dict[str, Any]) -> bool:
    outcomes = row.get("ours", {}).get("outcomes")
    return outcomes is not None and all(o == "pass" for o in outcomes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("packages", nargs="*", type=Path)
    parser.add_argument("--image", default=None, help="sandbox image (default: guardrail's)")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    parser.add_argument("--inner", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.inner:
        inner(args.inner)
        return
    from guardrail.sandbox.image import default_image

    image = args.image or default_image()
    every: dict[str, list[dict[str, Any]]] = {}
    failures = []
    for package in args.packages:
        rows = run_in_container(image, package, extract(package))
        every[package.name] = rows
        line, violations = summarise(package.name, rows)
        print(line)
        for name in violations:
            print(f"  VIOLATION {name}")
        failures += violations
    if args.json:
        args.json.write_text(json.dumps(every, indent=1))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
