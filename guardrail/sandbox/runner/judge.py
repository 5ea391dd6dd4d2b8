"""The judge process: run the spec's setup and tests, calling into the candidate through the
channel, and decide every outcome itself.

Every test outcome carries a ``fault`` kind that only the judge's own code paths set (the call
timed out, the candidate's process ended, it broke the protocol, a value could not cross, the
code lacked its module's context or a dependency); the verdict's status derives from those
kinds, never from an outcome word. A test judged ``FAIL`` on the code as it ran makes the
candidate ``failed`` even when another test lacked context: that failure was real.

The tests see the candidate as doctests see a module: the names ``job["bind"]`` gives are remote
references to the candidate's globals, other free names resolve to its globals lazily (real
builtins and the tests' own names first), and packages of the job's context import as remote
modules (`remote.Names`). The judge never runs the candidate's or the package's code.

A candidate's exception becomes ``ERROR:<name>`` with the name reduced to identifier characters,
so naming an exception ``Unserialisable`` or ``CandidateExited`` changes nothing but the word.
"""

from __future__ import annotations

import ast
import builtins
import contextlib
import sys
from typing import Any

from . import showing
from .calls import Calls, Discarded, Fault, lacks_context
from .codec import message_of
from .doctesting import DEFINE_CLASS, Unjudged, doctest_example, example_sources
from .exceptions import describe_exception, safe_name
from .fingerprints import Expected, expected, not_retrieved
from .framing import ChannelClosed, read_frame
from .observing import OBSERVER, Observer
from .remote import Names, RemoteHandle, global_reference
from .returned import RETURNED, Returned, rewrite
from .seccomp import refused_detail, refused_facility

# Fault kind (also the verdict's reason word) -> the outcome word the release uses for it.
FAULT_OUTCOMES = {
    "timeout": "TIMEOUT",
    "candidate_exited": "ERROR:CandidateExited",
    "protocol_violation": "ERROR:ProtocolViolation",
    "unserialisable": "ERROR:Unserialisable",
    "missing_context": "ERROR:MissingContext",
    "missing_dependency": "ERROR:MissingDependency",
    "refused_facility": "ERROR:RefusedFacility",
}
# The judge's own names in the tests' namespace: never bound to the candidate. Bound, the
# candidate's function (an alias guessed for a spec whose entry point was inferred from doctest
# calls, or a hostile `__doctest_example__`) would be called to run, and pass, every example.
_JUDGES_OWN = frozenset(
    {"__name__", "__builtins__", "__doctest_example__", DEFINE_CLASS, OBSERVER, RETURNED}
)
# Why a test after a sticky fault is not run (unserialisable: mirrors, a test changed a copy).
_NOT_RUN = {
    "ended": "not run: an earlier test ended the candidate",
    "missing_context": "not run: an earlier test found that what the tests call is not the"
    " retrieved definition",
    "unserialisable": "not run: the tests' copy of a module global and the candidate's own no"
    " longer agree (an earlier test changed one the other could not follow)",
}
# A refused load (the greeting's type) that says what was missing rather than what was wrong.
_LOAD_REASONS = {
    "MissingEntryPoint": ("error", "missing_entry_point"),
    "MissingDependency": ("unverifiable", "missing_dependency"),
    "ModuleNotFoundError": ("unverifiable", "missing_dependency"),
    "MissingContext": ("unverifiable", "missing_context"),
}


class Judge(Calls):
    """Runs the spec's tests in a namespace whose candidate names are remote references."""

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
        context = job.get("context")
        self.has_context = bool(context)
        withheld = context.get("withheld") if isinstance(context, dict) else None
        self.withheld = (
            frozenset(n for n in withheld if type(n) is str) if withheld else frozenset()
        )
        if not hello.get("loaded"):
            return self._refused(hello)
        judged, problem = _retrieved_at_load(context, hello.get("retrieved"))
        if problem is not None:
            return make_report("unverifiable", "missing_context", problem)
        sys.stdout = Discarded()
        shipped = set(context.get("modules", {})) if isinstance(context, dict) else set()
        try:
            names = Names(self._lookup, _bound_by(_nodes(job)))
            names["__import__"] = self._importer({n.partition(".")[0] for n in shipped}, shipped)
            self.observer = Observer(self.fail)
            self.returned = Returned()
            namespace: dict[str, Any] = {
                "__name__": "__judge__",
                "__builtins__": names,
                "__doctest_example__": doctest_example,
                DEFINE_CLASS: self.define_class,
                OBSERVER: self.observer,
                RETURNED: self.returned,
            }
            exec(compile(job["setup"], "<setup>", "exec"), namespace)
        except ModuleNotFoundError as exc:  # the setup's own import (``from pkg import f``)
            return make_report("unverifiable", *self._missing_module(exc))
        except Fault:  # the setup reached the candidate (a context import, a module global)
            return self._faulted("in the setup")
        except BaseException as exc:
            return make_report("error", "setup_error", f"the spec's setup raised {exc!r}"[:2000])
        bind = job.get("bind") or {job["entry_point"]: job["entry_point"]}
        for name, target in bind.items():
            if str(name) in _JUDGES_OWN:
                continue
            try:  # asked for at once: a class must be its stand-in class (``type(x) is Cls``)
                value = self.operate("get", {"global": str(target)})
            except Fault:
                return self._faulted("binding the tests' names")
            except Exception:  # its answer was an exception: the tests meet the call's own
                value = global_reference(self, str(target))
            namespace[str(name)] = value
        tests = [self._run_test(test, namespace) for test in job["tests"]]
        if judged is not None and not self.fault:  # asked again: a swap after binding
            ended = self._retrieved_at_end(judged, tests)
            if ended is not None:
                return ended
        offered = hello.get("functions")
        offered = offered if type(offered) is list else []  # `in 5` would crash the judge
        alias = hello.get("alias")
        if not (isinstance(alias, str) and alias.isidentifier() and alias in offered):
            alias = None  # the candidate's word; kept only when it names a real function
        report = make_report(*_status_of(tests), alias=alias)
        report["tests"] = tests
        return report

    def _retrieved_at_end(
        self, judged: Expected, tests: list[dict[str, Any]]
    ) -> dict[str, Any] | None:
        """The report when, after the last test, what the tests called is not (or was not
        always) the retrieved definition, or the candidate cannot say (`fingerprints`)."""
        try:
            said = self.exchange({"op": "retrieved"}).get("retrieved")
        except Fault:
            return self._faulted("after the last test")
        problem = not_retrieved(said, judged, "after the last test", ended=True)
        if problem is None:
            return None
        return {**make_report("unverifiable", "missing_context", problem), "tests": tests}

    def _faulted(self, where: str) -> dict[str, Any]:
        """The report when a fault ended the job before its tests ran."""
        kind, detail = self.last_fault or (self.fault or "protocol_violation", "")
        status, reason, message = _status_of([_outcome("<setup>", kind, detail)])
        return make_report(status, reason, f"{where}: {message}")

    def _refused(self, hello: dict[str, Any]) -> dict[str, Any]:
        """The report for code that did not load: what was missing, or what went wrong."""
        kind = safe_name(hello.get("type"))
        message = str(hello.get("message", ""))
        status, reason = _LOAD_REASONS.get(kind, ("error", "load_error"))
        facility = refused_facility(hello)
        if facility is not None:  # its module's import met a facility the sandbox refuses
            status, reason, message = (
                "unverifiable",
                "refused_facility",
                refused_detail(facility, message),
            )
        if not self.has_context and lacks_context({**hello, "type": kind}):
            status, reason = "unverifiable", "missing_context"
        return make_report(status, reason, f"{kind}: {message}"[:2000])

    def _lookup(self, name: str) -> Any:
        """A free name of the tests, from the candidate's globals (remote objects are kept)."""
        cached = self.globals.get(name)
        if cached is not None:
            return cached
        value = self.global_value(name)
        if isinstance(value, RemoteHandle):
            self.globals[name] = value
        return value

    def _importer(self, packages: set[str], shipped: set[str]) -> Any:
        """``__import__`` for the tests: a package of the job's context is the candidate's,
        imported there and seen here as remote modules; so is one the standard library lacks
        (the judge's path is the standard library's alone: the image's packages are the
        candidate's, `boot`); anything else is a real import."""

        def import_(
            name: str,
            globals: Any = None,
            locals: Any = None,
            fromlist: Any = (),
            level: int = 0,
        ) -> Any:
            if level or name.partition(".")[0] not in packages:
                try:
                    return builtins.__import__(name, globals, locals, fromlist, level)
                except ModuleNotFoundError as exc:
                    if level or (exc.name or "").partition(".")[0] != name.partition(".")[0]:
                        raise  # a relative import, or a module the standard one imports
                    self._import_remote(name, exc)
            module = self.import_module(name)
            for item in fromlist or ():
                if f"{name}.{item}" in shipped:
                    self.import_module(f"{name}.{item}")
            return module if fromlist else self.import_module(name.partition(".")[0])

        return import_

    def _import_remote(self, name: str, missing: ModuleNotFoundError) -> None:
        """Import ``name`` in the candidate; if it lacks it too, the tests' import fails as it
        did here (`_missing_module` says what was missing), not as the candidate's fault."""
        before = self.last_fault
        try:
            self.import_module(name)
        except Fault as fault:
            if fault.args[:1] != ("missing_dependency",):
                raise
            self.last_fault = before
            raise missing from None

    def _run_test(self, test: str, namespace: dict[str, Any]) -> dict[str, Any]:
        if self.fault:
            return _outcome(test, self.fault, _NOT_RUN.get(self.fault, _NOT_RUN["ended"]))
        self.last_fault = None
        self.observer.take()  # an earlier test's observation never carries over
        showing.take_used()  # nor does its doctest display of a candidate's text
        self.returned.start()
        outcome: dict[str, Any] = {"test": test, "outcome": "pass", "detail": "", "fault": None}
        returned = None
        try:
            exec(compile(rewrite(test), "<test>", "exec"), namespace)
        except Fault:
            pass
        except Unjudged as exc:  # an earlier example's fault left it nothing to judge
            return _outcome(test, "unserialisable", message_of(exc, 500))
        except AssertionError as exc:
            outcome.update(outcome="FAIL", detail=message_of(exc, 500))
            returned = self.returned.take()  # what the failing assert's checked call gave
        except ModuleNotFoundError as exc:  # the test's own import: this image lacks it
            return _outcome(test, *self._missing_module(exc))
        except BaseException as exc:
            facility = refused_facility(describe_exception(exc))  # the test's own refused call
            if facility is not None:
                return _outcome(test, "refused_facility", refused_detail(facility, str(exc)))
            outcome.update(outcome=f"ERROR:{safe_name(type(exc).__name__)}")
            outcome["detail"] = message_of(exc, 500)
        if not self.fault:  # the test's last changes to its copies of globals, for later tests
            judged = self.last_fault
            with contextlib.suppress(Fault):  # sticky: later tests are not run (``mirrors``)
                self.check_kept()
            self.last_fault = judged  # this test's outcome stands: no call saw the copy since
        # A fault decides the outcome even when the test caught it (``except BaseException``)
        # and went on: what followed rested on something the judge could not judge.
        fault = self._fault_during_test()
        if fault is not None:
            return _outcome(test, *fault)
        seen = self.observer.take()
        if outcome["outcome"] == "pass" and seen is not None:
            outcome["observed"] = seen  # set only here: by judge code, on a test it judged
        if showing.take_used():
            outcome["shown_by_candidate"] = True
        if returned is not None:
            outcome["returned"] = returned  # set only here: by judge code, on a judged FAIL
        return outcome

    def _missing_module(self, exc: ModuleNotFoundError) -> tuple[str, str]:
        """The fault for a module the setup or a test imports and the judge cannot: without
        context it may well be the snippet's own package (a doctest's ``from more_itertools
        import take``), which only context supplies (``missing_context``); with context the
        package's own modules import from it (remote), so what is missing is a dependency."""
        kind = "missing_dependency" if self.has_context else "missing_context"
        return kind, f"the tests import a module the sandbox lacks: {message_of(exc, 400)}"

    def _fault_during_test(self) -> tuple[str, str] | None:
        return self.last_fault  # a method: mypy would take it for None after the reset above


def _retrieved_at_load(context: Any, said: Any) -> tuple[Expected | None, str | None]:
    """The judge's own view of the judged definition (None: the context judges none) and why
    the candidate's greeting does not show it bound under the tested name (None: it does)."""
    claimed = said.get("found") if isinstance(said, dict) else None
    judged = expected(context, claimed)  # the judge's own compile of the retrieved text
    return judged, None if judged is None else not_retrieved(said, judged, "at load")


def _outcome(test: str, kind: str, detail: str) -> dict[str, Any]:
    """The outcome of a test the judge could not judge: ``fault`` says why, structurally."""
    return {"test": test, "outcome": FAULT_OUTCOMES[kind], "detail": detail[:500], "fault": kind}


def _nodes(job: dict[str, Any]) -> list[ast.AST]:
    """Every node of the setup and tests, and of the doctest examples the tests carry as text."""
    trees = [ast.parse(text) for text in [job["setup"], *job["tests"]]]
    trees += [ast.parse(source) for tree in trees for source in example_sources(tree)]
    return [node for tree in trees for node in ast.walk(tree)]


def _bound_by(nodes: list[ast.AST]) -> set[str]:
    """Names the test code binds: assignment and loop targets, ``as`` names, defs, imports,
    match captures."""
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
        elif isinstance(node, ast.MatchAs | ast.MatchStar) and node.name:  # ``case (x, y):``
            bound.add(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest:  # ``case {**rest}:``
            bound.add(node.rest)
    return bound


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
    if judged_fail:  # judged on the code as it ran: wrong, whatever else could not be judged
        return "failed", "tests_failed", f"{len(judged_fail)} of {len(tests)} tests failed"
    for kind in ("refused_facility", "missing_dependency", "missing_context"):  # named
        first = next((t["detail"] for t in tests if t["fault"] == kind), None)
        if first is not None:
            return "unverifiable", kind, first
    return (
        "unverifiable",
        "unserialisable",
        "tests ran but their values could not cross the sandbox boundary to be judged",
    )


def make_report(status: str, reason: str, message: str, alias: Any = None) -> dict[str, Any]:
    return {"status": status, "reason": reason, "message": message, "alias": alias, "tests": []}
