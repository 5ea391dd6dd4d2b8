"""The judge process: run the spec's setup and tests, calling into the candidate through the
channel, and decide every outcome itself.

Every test outcome carries a ``fault`` kind that only the judge's own code paths set (the call
timed out, the candidate's process ended, it broke the protocol, a value could not cross); the
verdict's status derives from those kinds, never from an outcome word. A candidate's exception
becomes ``ERROR:<name>`` with the name reduced to identifier characters, so naming an exception
``Unserialisable`` or ``CandidateExited`` changes nothing but the word.
"""

from __future__ import annotations

import ast
import builtins
import json
from typing import Any, NoReturn

from .codec import (
    Unserialisable,
    by_position_and_name,
    can_write_back,
    decode,
    encode,
    message_of,
    write_back,
)
from .framing import ChannelClosed, read_frame, write_frame


class _Fault(BaseException):
    """The call could not be judged; the fault kind is in ``args[0]``."""


# Fault kind (also the verdict's reason word) -> the outcome word the release uses for it.
FAULT_OUTCOMES = {
    "timeout": "TIMEOUT",
    "candidate_exited": "ERROR:CandidateExited",
    "protocol_violation": "ERROR:ProtocolViolation",
    "unserialisable": "ERROR:Unserialisable",
}
MAX_NAME = 100
# Greeting types of a load refused for want of something (runner/loader.py) -> the reason.
_WANTING = {"MissingDependency": "missing_dependency", "MissingContext": "missing_context"}


def safe_name(name: object) -> str:
    """An exception type name as plain identifier characters, capped: candidate text is data."""
    text = str(name)[:MAX_NAME]
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in text) or "_"


_NEVER_REBUILT = (StopIteration, StopAsyncIteration)


class CandidateRaised(Exception):
    """Stand-in for a candidate exception that is not a builtin one."""


class CandidateRaisedBase(BaseException):
    """Stand-in for a candidate's ``SystemExit``, ``KeyboardInterrupt`` or other exception that
    is not an `Exception`: a test's ``except Exception`` must not catch it (in-process it would
    not), so it stays outside that family."""


def _rebuild_exception(info: dict[str, Any]) -> BaseException:
    name = safe_name(info.get("type", "Exception"))
    message = str(info.get("message", ""))
    for base_name in info.get("bases", []):
        base = getattr(builtins, str(base_name), None)
        if base in _NEVER_REBUILT:
            break  # raised inside a test, it would end the test's map() or filter() early
        if isinstance(base, type) and issubclass(base, Exception):
            cls: type[Exception] = base if base_name == name else type(name, (base,), {})
            try:
                rebuilt: BaseException = cls(message)
            except TypeError:
                break
            return rebuilt
    family = CandidateRaised if "Exception" in info.get("bases", []) else CandidateRaisedBase
    stand_in: type[BaseException] = type(name, (family,), {})
    return stand_in(message)


class Judge:
    """Runs the spec's tests in a namespace whose candidate functions are remote proxies."""

    def __init__(self, channel: int, deadline: float) -> None:
        self.channel = channel
        self.deadline = deadline
        self.fault: str | None = None  # sticky kind: once set, every later test reports it
        self.last_fault: tuple[str, str] | None = None  # (kind, detail) of the latest in a test

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.fault:
            raise _Fault(self.fault)
        try:
            request: dict[str, Any] = {
                "name": name,
                "args": [encode(a) for a in args],
                "kwargs": {str(k): encode(v) for k, v in kwargs.items()},
            }
            before = by_position_and_name(request["args"], request["kwargs"])
            targets = by_position_and_name(list(args), {str(k): v for k, v in kwargs.items()})
        except Unserialisable as exc:
            self._fail("unserialisable", str(exc), sticky=False)
        try:
            write_frame(self.channel, request)
            reply = read_frame(self.channel, self.deadline)
        except TimeoutError:
            self._fail("timeout", "the candidate ran past its time limit")
        except (ChannelClosed, OSError):
            self._fail("candidate_exited", "the candidate process ended during a call")
        except (ValueError, RecursionError, MemoryError) as exc:  # not JSON, or nested to crash
            self._fail("protocol_violation", f"unreadable reply: {exc!r}"[:500])
        if not isinstance(reply, dict):
            self._fail("protocol_violation", "reply is not an object")
        if "unserialisable" in reply:
            self._fail("unserialisable", str(reply["unserialisable"]), sticky=False)
        raised = reply.get("raised")
        if raised is not None and not isinstance(raised, dict):
            self._fail("protocol_violation", "malformed exception in the reply")
        try:
            after = by_position_and_name(reply["args"], reply["kwargs"])
            # Compared as JSON text: ``True == 1`` in Python, but an int turned into a bool in
            # place is a change the test may check (``type(v) is int``).
            changed = [key for key in before if _text(after[key]) != _text(before[key])]
            updates = {key: decode(after[key]) for key in changed}
            value = None if raised is not None else self._value(reply["value"], targets)
        except (KeyError, ValueError, TypeError, AttributeError, RecursionError) as exc:
            self._fail("protocol_violation", f"malformed reply: {exc!r}"[:500])
        if any(not can_write_back(targets[key]) for key in changed):
            self._fail(
                "unserialisable",
                "the candidate changed an argument in a way that cannot be copied back"
                " (a container nested in it, or one the test may also hold elsewhere)",
                sticky=False,
            )
        for key, updated in updates.items():
            write_back(targets[key], updated)
        if raised is not None:
            raise _rebuild_exception(raised)
        return value

    @staticmethod
    def _value(encoded: Any, targets: dict[int | str, Any]) -> Any:
        """The call's result: an argument the candidate returned as itself is the test's own
        object (written back first), so ``f(xs) is xs`` holds as it would in-process."""
        if type(encoded) is dict and set(encoded) == {"arg"}:
            return targets[encoded["arg"]]
        return decode(encoded)

    def _fail(self, kind: str, detail: str, *, sticky: bool = True) -> NoReturn:
        self.last_fault = (kind, detail)
        if sticky:
            self.fault = kind
        raise _Fault(kind, detail)

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        try:
            hello = read_frame(self.channel, self.deadline)
        except TimeoutError:
            return make_report("timeout", "timeout", "the candidate did not finish loading in time")
        except (ChannelClosed, OSError):
            return make_report("error", "candidate_exited", "the candidate exited while loading")
        except (ValueError, RecursionError, MemoryError) as exc:  # a greeting built to crash us
            return make_report("error", "protocol_violation", f"unreadable greeting: {exc!r}"[:500])
        if not isinstance(hello, dict) or "loaded" not in hello:
            return make_report(
                "error", "protocol_violation", "the candidate's greeting is malformed"
            )
        if not hello.get("loaded"):
            kind = safe_name(hello.get("type"))
            message = f"{kind}: {hello.get('message', '')}"[:2000]
            if kind in _WANTING:  # loader.LoadRefused: not the code's fault, never failed
                return make_report("unverifiable", _WANTING[kind], message)
            reason = "missing_entry_point" if kind == "MissingEntryPoint" else "load_error"
            return make_report("error", reason, message)
        namespace: dict[str, Any] = {"__name__": "__judge__"}
        try:
            exec(compile(job["setup"], "<setup>", "exec"), namespace)
        except BaseException as exc:
            return make_report("error", "setup_error", f"the spec's setup raised {exc!r}"[:2000])
        offered = hello.get("functions")
        bound = offered if isinstance(offered, list) else []
        for name in _names_to_bind(offered, job, namespace):
            namespace[name] = self._proxy(name)
        tests = [self._run_test(test, namespace) for test in job["tests"]]
        alias = hello.get("alias")
        if not (isinstance(alias, str) and alias.isidentifier() and alias in bound):
            alias = None  # the candidate's word; kept only when it names a real function
        report = make_report(*_status_of(tests), alias=alias)
        report["tests"] = tests
        return report

    def _fault_during_test(self) -> tuple[str, str] | None:
        return self.last_fault

    def _proxy(self, name: str) -> Any:
        def proxy(*args: Any, **kwargs: Any) -> Any:
            return self.call(name, args, kwargs)

        proxy.__name__ = proxy.__qualname__ = name
        return proxy

    def _run_test(self, test: str, namespace: dict[str, Any]) -> dict[str, Any]:
        if self.fault:
            return _outcome(test, self.fault, "not run: an earlier test ended the candidate")
        self.last_fault = None
        try:
            exec(compile(test, "<test>", "exec"), namespace)
        except _Fault:
            pass
        except AssertionError as exc:
            return {"test": test, "outcome": "FAIL", "detail": message_of(exc, 500), "fault": None}
        except BaseException as exc:
            outcome = f"ERROR:{safe_name(type(exc).__name__)}"
            detail = message_of(exc, 500)
            return {"test": test, "outcome": outcome, "detail": detail, "fault": None}
        # A fault caught by the test itself (``except BaseException``) still decides the outcome.
        fault = self._fault_during_test()
        if fault is not None:
            return _outcome(test, *fault)
        return {"test": test, "outcome": "pass", "detail": "", "fault": None}


def _outcome(test: str, kind: str, detail: str) -> dict[str, Any]:
    """The outcome of a test the judge could not judge: ``fault`` says why, structurally."""
    return {"test": test, "outcome": FAULT_OUTCOMES[kind], "detail": detail[:500], "fault": kind}


def _names_to_bind(offered: Any, job: dict[str, Any], namespace: dict[str, Any]) -> list[str]:
    """The entry point, plus candidate functions the tests name that nothing else defines.

    The list comes from the candidate, so it is never trusted to shadow a builtin (a proxy named
    ``abs`` or ``len`` would let the candidate answer the judge's own arithmetic).
    """
    nodes = [node for test in job["tests"] for node in ast.walk(ast.parse(test))]
    referenced = {node.id for node in nodes if isinstance(node, ast.Name)}
    # A name the tests bind themselves (``route = find_route(...)``) is the test's variable, never
    # a candidate function: bound as a proxy it would answer for the test.
    referenced -= _bound_by(nodes)
    names = [job["entry_point"]]
    for name in offered if isinstance(offered, list) else []:
        if (
            isinstance(name, str)
            and name in referenced
            and name not in namespace
            and not hasattr(builtins, name)
            and name not in names
        ):
            names.append(name)
    return names


def _bound_by(nodes: list[ast.AST]) -> set[str]:
    """Names the test code binds: assignment and loop targets, ``as`` names, defs, imports."""
    bound: set[str] = set()
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef) or (
            isinstance(node, ast.ExceptHandler) and node.name
        ):
            bound.add(str(node.name))
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
    return bound


def _text(encoded: Any) -> str:
    """An encoded value as canonical JSON text: equal only if equal in type as well as value."""
    return json.dumps(encoded, separators=(",", ":"))


def _status_of(tests: list[dict[str, Any]]) -> tuple[str, str, str]:
    """The verdict from the judge's fault kinds; outcome words (candidate text) decide nothing."""
    if not tests:
        return "unverifiable", "no_tests", "no tests to run"
    faults = {t["fault"] for t in tests}
    if all(t["outcome"] == "pass" and t["fault"] is None for t in tests):
        return "verified", "passed", f"all {len(tests)} tests passed"
    if "timeout" in faults:
        return "timeout", "timeout", "the candidate ran past its time limit"
    if "candidate_exited" in faults:
        return "error", "candidate_exited", "the candidate process ended during a test"
    if "protocol_violation" in faults:
        return "error", "protocol_violation", "the candidate broke the call protocol"
    judged_fail = [t for t in tests if t["fault"] is None and t["outcome"] != "pass"]
    if judged_fail:
        return "failed", "tests_failed", f"{len(judged_fail)} of {len(tests)} tests failed"
    return (
        "unverifiable",
        "unserialisable",
        "tests ran but their values could not cross the sandbox boundary to be judged",
    )


def make_report(status: str, reason: str, message: str, alias: Any = None) -> dict[str, Any]:
    return {"status": status, "reason": reason, "message": message, "alias": alias, "tests": []}
