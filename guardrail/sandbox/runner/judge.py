"""The judge process: run the spec's setup and tests, calling into the candidate through the
channel, and decide every outcome itself."""

from __future__ import annotations

import ast
import builtins
from typing import Any, NoReturn

from .codec import Unserialisable, by_position_and_name, can_write_back, decode, encode, write_back
from .framing import ChannelClosed, read_frame, write_frame


class _Fault(BaseException):
    """The call could not be judged; the outcome word is in ``args[0]``."""


_NEVER_REBUILT = (StopIteration, StopAsyncIteration)


class CandidateRaised(Exception):
    """Stand-in for a candidate exception that is not a builtin one (or is a BaseException)."""


def _rebuild_exception(info: dict[str, Any]) -> BaseException:
    name = str(info.get("type", "Exception"))
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
    stand_in: type[Exception] = type(name, (CandidateRaised,), {})
    return stand_in(message)


class Judge:
    """Runs the spec's tests in a namespace whose candidate functions are remote proxies."""

    def __init__(self, channel: int, deadline: float) -> None:
        self.channel = channel
        self.deadline = deadline
        self.fault: str | None = None  # sticky: once set, every later test reports it
        self.last_fault: tuple[str, str] | None = None  # the latest fault within one test

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
            self._fail("ERROR:Unserialisable", str(exc), sticky=False)
        try:
            write_frame(self.channel, request)
            reply = read_frame(self.channel, self.deadline)
        except TimeoutError:
            self._fail("TIMEOUT", "the candidate ran past its time limit")
        except (ChannelClosed, OSError):
            self._fail("ERROR:CandidateExited", "the candidate process ended during a call")
        except ValueError as exc:
            self._fail("ERROR:ProtocolViolation", str(exc))
        if not isinstance(reply, dict):
            self._fail("ERROR:ProtocolViolation", "reply is not an object")
        if "raised" in reply:
            raise _rebuild_exception(reply["raised"])
        if "unserialisable" in reply:
            self._fail("ERROR:Unserialisable", str(reply["unserialisable"]), sticky=False)
        try:
            after = by_position_and_name(reply["args"], reply["kwargs"])
            changed = [key for key in before if after[key] != before[key]]
            value = decode(reply["value"])
            updates = {key: decode(after[key]) for key in changed}
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            self._fail("ERROR:ProtocolViolation", f"malformed reply: {exc!r}")
        if any(not can_write_back(targets[key]) for key in changed):
            self._fail(
                "ERROR:Unserialisable",
                "the candidate changed an argument in a way that cannot be copied back"
                " (a container nested in it, or one the test may also hold elsewhere)",
                sticky=False,
            )
        for key, updated in updates.items():
            write_back(targets[key], updated)
        return value

    def _fail(self, outcome: str, detail: str, *, sticky: bool = True) -> NoReturn:
        self.last_fault = (outcome, detail)
        if sticky:
            self.fault = outcome
        raise _Fault(outcome, detail)

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        try:
            hello = read_frame(self.channel, self.deadline)
        except TimeoutError:
            return make_report("timeout", "timeout", "the candidate did not finish loading in time")
        except (ChannelClosed, OSError):
            return make_report("error", "candidate_exited", "the candidate exited while loading")
        except ValueError as exc:
            return make_report("error", "protocol_violation", str(exc))
        if not isinstance(hello, dict) or "loaded" not in hello:
            return make_report(
                "error", "protocol_violation", "the candidate's greeting is malformed"
            )
        if not hello.get("loaded"):
            kind = str(hello.get("type"))
            reason = "missing_entry_point" if kind == "MissingEntryPoint" else "load_error"
            return make_report("error", reason, f"{kind}: {hello.get('message', '')}"[:2000])
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

    def _run_test(self, test: str, namespace: dict[str, Any]) -> dict[str, str]:
        if self.fault:
            return {
                "test": test,
                "outcome": self.fault,
                "detail": "not run: an earlier test ended the candidate",
            }
        self.last_fault = None
        try:
            exec(compile(test, "<test>", "exec"), namespace)
        except _Fault:
            pass
        except AssertionError as exc:
            return {"test": test, "outcome": "FAIL", "detail": str(exc)[:500]}
        except BaseException as exc:
            return {
                "test": test,
                "outcome": f"ERROR:{type(exc).__name__}",
                "detail": str(exc)[:500],
            }
        # A fault caught by the test itself (``except BaseException``) still decides the outcome.
        fault = self._fault_during_test()
        if fault is not None:
            outcome, detail = fault
            return {"test": test, "outcome": outcome, "detail": detail[:500]}
        return {"test": test, "outcome": "pass", "detail": ""}


def _names_to_bind(offered: Any, job: dict[str, Any], namespace: dict[str, Any]) -> list[str]:
    """The entry point, plus candidate functions the tests name that nothing else defines.

    The list comes from the candidate, so it is never trusted to shadow a builtin (a proxy named
    ``abs`` or ``len`` would let the candidate answer the judge's own arithmetic).
    """
    referenced = {
        node.id
        for test in job["tests"]
        for node in ast.walk(ast.parse(test))
        if isinstance(node, ast.Name)
    }
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


def _status_of(tests: list[dict[str, str]]) -> tuple[str, str, str]:
    outcomes = [t["outcome"] for t in tests]
    if not outcomes:
        return "unverifiable", "no_tests", "no tests to run"
    if all(o == "pass" for o in outcomes):
        return "verified", "passed", f"all {len(outcomes)} tests passed"
    if "TIMEOUT" in outcomes:
        return "timeout", "timeout", "the candidate ran past its time limit"
    if "ERROR:CandidateExited" in outcomes:
        return "error", "candidate_exited", "the candidate process ended during a test"
    if "ERROR:ProtocolViolation" in outcomes:
        return "error", "protocol_violation", "the candidate broke the call protocol"
    judged_fail = [o for o in outcomes if o not in ("pass", "ERROR:Unserialisable")]
    failed = f"{len(judged_fail)} of {len(outcomes)} tests failed"
    if judged_fail:
        return "failed", "tests_failed", failed
    return "unverifiable", "unserialisable", "a value could not cross the sandbox boundary"


def make_report(status: str, reason: str, message: str, alias: Any = None) -> dict[str, Any]:
    return {"status": status, "reason": reason, "message": message, "alias": alias, "tests": []}
