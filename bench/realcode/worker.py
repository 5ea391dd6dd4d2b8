"""Runs inside the ground-truth container (stdlib only): the real doctest of real functions.

Reads one JSON object on stdin: ``{"timeout": seconds, "items": [item, ...]}``, where an item is

* ``{"id", "kind": "doctest", "module", "qualname", "patch": null | {"line", "text"}, "lines":
  null | [first, last]}``: run the
  stdlib doctest runner on the docstring of ``module.qualname`` with the module's globals, as
  ``doctest.testmod`` would; with a ``patch``, the module is first re-executed from its own file
  with line ``line`` (1-based) replaced by ``text`` (``null`` deletes it): a mutant in place;
* ``{"id", "kind": "tests", "module", "qualname", "tests": [...]}``: run assert statements in a
  copy of the module's globals (the function under its own name): are a query's tests right?

Writes one JSON line per item: ``{"id", "outcome", "attempted", "failed", "detail"}`` with
outcome ``pass``, ``fail``, ``no_examples``, ``error`` (import or lookup failed) or ``timeout``;
a doctest item also says whether its examples ran the function's own code (``exercised``: a
profile hook sees its code object called), since a docstring whose examples are all ``+SKIP``
but an assignment, or that call another name, passes without testing the function; and whether
the name is bound to a definition in the module's own file (``here``), and with ``lines``, to
the one on those lines (``batched = _batched`` under a version switch binds another ``def``).
Each item runs in a forked child with an alarm and memory/CPU limits, so a mutant that loops or
eats memory costs its own item only.
"""

import doctest
import importlib
import importlib.util
import io
import json
import os
import resource
import select
import signal
import sys
import traceback
from types import ModuleType
from typing import Any, NoReturn

Result = dict[str, Any]

MEMORY = 1 << 30
TIME_SIGNALS = (signal.SIGALRM, signal.SIGXCPU)


def lookup(module: ModuleType, qualname: str) -> Any:
    """The function object behind ``qualname`` (unwrapping methods, properties, decorators)."""
    obj: Any = module
    for part in qualname.split("."):
        namespace = getattr(obj, "__dict__", {})
        obj = namespace[part] if part in namespace else getattr(obj, part)
        if isinstance(obj, staticmethod | classmethod):
            obj = obj.__func__
        elif isinstance(obj, property):
            obj = obj.fget
    return obj


def patched_module(name: str, patch: dict[str, Any]) -> ModuleType:
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None:
        raise ImportError(f"no source file for {name}")
    with open(spec.origin, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    index = patch["line"] - 1
    lines[index : index + 1] = [] if patch["text"] is None else [patch["text"]]
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    exec(compile("\n".join(lines), spec.origin, "exec"), module.__dict__)
    return module


def run_doctest(item: dict[str, Any]) -> Result:
    name = item["module"]
    module = patched_module(name, item["patch"]) if item.get("patch") else sys.modules[name]
    target = lookup(module, item["qualname"])
    finder = doctest.DocTestFinder(recurse=False)
    tests = finder.find(
        target, f"{name}.{item['qualname']}", module=module, globs=dict(module.__dict__)
    )
    report = io.StringIO()
    runner = doctest.DocTestRunner(verbose=False)
    codes = code_objects(target)
    ran: list[bool] = []

    def profile(frame: Any, event: str, _arg: Any) -> None:
        if event == "call" and not ran and frame.f_code in codes:
            ran.append(True)

    sys.setprofile(profile)
    try:
        for test in tests:
            runner.run(test, out=report.write)
    finally:
        sys.setprofile(None)
    failed, attempted = runner.summarize(verbose=False)
    if not attempted:
        return {"outcome": "no_examples", "attempted": 0, "failed": 0, "detail": ""}
    outcome = "fail" if failed else "pass"
    return {
        "outcome": outcome,
        "attempted": attempted,
        "failed": failed,
        "detail": report.getvalue()[:600],
        "exercised": bool(ran) or not codes,  # no code object to watch: not ours to say
        # The name may be bound to a definition of another module (urlutils' OrderedMultiDict is
        # dictutils' class; its fallback copy there never runs): then the doctest tests that one.
        "here": not codes or any(_defined_here(code, module, item.get("lines")) for code in codes),
    }


def _defined_here(code: Any, module: ModuleType, lines: list[int] | None) -> bool:
    if code.co_filename != module.__file__:
        return False
    return lines is None or lines[0] <= code.co_firstlineno <= lines[1]


def code_objects(target: Any) -> set[Any]:
    """The code objects whose running means the examples ran the target (through decorators,
    partials and properties)."""
    codes, seen, stack = set(), set(), [target]
    while stack:
        obj = stack.pop()
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        code = getattr(obj, "__code__", None)
        if code is not None:
            codes.add(code)
        for name in ("__wrapped__", "__func__", "func", "fget"):
            inner = getattr(obj, name, None)
            if inner is not None:
                stack.append(inner)
    return codes


def run_tests(item: dict[str, Any]) -> Result:
    module = sys.modules[item["module"]]
    lookup(module, item["qualname"])  # the function must exist where the query says
    namespace = dict(module.__dict__)
    failed = 0
    detail = ""
    for test in item["tests"]:
        try:
            exec(compile(test, "<query test>", "exec"), namespace)
        except Exception as exc:
            failed += 1
            detail = detail or f"{test}: {type(exc).__name__}: {exc}"[:600]
    outcome = "fail" if failed else "pass"
    return {"outcome": outcome, "attempted": len(item["tests"]), "failed": failed, "detail": detail}


def child(item: dict[str, Any], timeout: float, write_fd: int) -> NoReturn:
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))
    resource.setrlimit(resource.RLIMIT_CPU, (int(timeout) + 1, int(timeout) + 2))
    signal.alarm(max(1, int(timeout)))
    try:
        result = run_tests(item) if item["kind"] == "tests" else run_doctest(item)
    except BaseException as exc:  # anything a mutant does is its outcome, not our crash
        last = traceback.format_exception_only(type(exc), exc)[-1].strip()
        result = {"outcome": "error", "attempted": 0, "failed": 0, "detail": last[:600]}
    with os.fdopen(write_fd, "w") as out:
        out.write(json.dumps(result))
    os._exit(0)


def run_one(item: dict[str, Any], timeout: float) -> Result:
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_fd)
        child(item, timeout, write_fd)
    os.close(write_fd)
    chunks = []
    killed = False
    while True:
        ready, _, _ = select.select([read_fd], [], [], timeout + 3)
        if not ready:
            os.kill(pid, signal.SIGKILL)
            killed = True
            break
        chunk = os.read(read_fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_fd)
    _, status = os.waitpid(pid, 0)
    try:
        result: Result = json.loads(b"".join(chunks))
    except ValueError:
        # The alarm's default action ends the child (no handler a doctest could catch).
        out_of_time = os.WIFSIGNALED(status) and os.WTERMSIG(status) in TIME_SIGNALS
        word = "timeout" if killed or out_of_time else "error"
        return {"outcome": word, "attempted": 0, "failed": 0, "detail": f"child status {status}"}
    return result


def main() -> None:
    request = json.load(sys.stdin)
    timeout = request["timeout"]
    broken = {}
    for name in sorted({item["module"] for item in request["items"]}):
        try:
            importlib.import_module(name)
        except BaseException as exc:
            broken[name] = traceback.format_exception_only(type(exc), exc)[-1].strip()[:600]
    for item in request["items"]:
        if item["module"] in broken:
            result = {
                "outcome": "error",
                "attempted": 0,
                "failed": 0,
                "detail": f"import {item['module']}: {broken[item['module']]}",
            }
        else:
            result = run_one(item, timeout)
        result["id"] = item["id"]
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
