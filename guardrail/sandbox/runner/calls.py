"""The judge's end of the channel: requests to the candidate, and the callbacks it asks for.

Every request waits for its reply under the job's deadline; while it waits, the candidate may ask
the judge to run one of the judge's own objects (a test's lambda, iterator or function: a
callback frame), which the judge runs and answers before it reads on, so callbacks nest (a
callback may call the candidate again). What the candidate printed arrives with each frame and
is written to the judge's ``sys.stdout`` at once (a doctest checker that swaps it sees it).

Faults are the judge's own findings (``Fault``): sticky ones (timeout, the candidate gone, a
broken protocol) end the candidate for every later test; non-sticky ones (a value that cannot
cross, a candidate that lacks its module's context or a dependency) end only the current test.
"""

from __future__ import annotations

import collections
from typing import Any, NoReturn

from . import replies, served
from .codec import (
    Unserialisable,
    by_position_and_name,
    can_write_back,
    changed_keys,
    decode,
    encode,
    write_back,
)
from .exceptions import describe_exception, safe_name
from .framing import ChannelClosed, FrameTooLarge, read_frame, write_frame
from .identity import argument_parts
from .judge_objects import JudgeObjects
from .mirrors import Copies, is_mutable
from .remote import RemoteClass, RemoteHandle, remote_class
from .replies import Discarded, Fault, lacks_context

__all__ = ["Calls", "Discarded", "Fault", "lacks_context"]


_MALFORMED = (KeyError, ValueError, TypeError, AttributeError, IndexError, RecursionError)


class Calls:
    """Requests to the candidate over ``channel``, each bounded by ``deadline``."""

    # Reading replies (`replies`), serving callbacks and draining iterators (`served`): each a
    # function of the Calls it serves, kept in its own module.
    _answer = replies.answer
    _value = replies.value
    _raised = replies.raised
    _show = replies.show
    _set_attributes = replies.set_attributes
    ask_bool = replies.ask_bool
    shown_text = replies.shown_text
    define_class = replies.define_class
    drain = served.drain
    next_of = served.next_of
    _drain_more = served.drain_more
    _serve = served.serve
    _attribute = served.attribute

    def __init__(self, channel: int, deadline: float) -> None:
        self.channel = channel
        self.deadline = deadline
        self.fault: str | None = None  # sticky kind: once set, every later test reports it
        self.last_fault: tuple[str, str] | None = None  # (kind, detail) of the latest in a test
        self.has_context = False
        self.withheld: frozenset[str] = frozenset()  # the context's modules left in the tree
        self.mine = JudgeObjects()
        self.handles: dict[int, Any] = {}  # handle id -> its stand-in (one per candidate object)
        self.modules: dict[str, Any] = {}  # remote modules by name
        # handle id -> (items a drain sent that no ``next`` took yet, how the iterator ended)
        self.drained: dict[int, tuple[collections.deque[Any], dict[str, Any] | None]] = {}
        self.globals: dict[str, Any] = {}  # the candidate's globals the tests read, by name
        self.thrown: list[BaseException] = []  # what the test's callbacks raised, by number
        # The tests' one copy of each mutable global of the candidate's, kept in step (mirrors).
        self.kept = Copies(lambda value: encode(value, other=self.mine.reference))
        self.kept_attributes: dict[Any, str] = {}  # (module handle, attribute) -> kept name
        self.argument_parts: list[Any] | None = None  # while a call's result is read

    def fail(self, kind: str, detail: str, *, sticky: bool = True) -> NoReturn:
        self.last_fault = (kind, detail[:500])
        if sticky:
            self.fault = kind
        raise Fault(kind, detail)

    # -- values ----------------------------------------------------------------------------

    def out_value(self, value: object) -> Any:
        try:
            return encode(value, other=self.mine.reference)
        except (Unserialisable, RecursionError) as exc:
            self.fail("unserialisable", str(exc), sticky=False)

    def in_value(self, data: Any) -> Any:
        """A value from the candidate (handles become proxies); malformed: a protocol fault."""
        try:
            return decode(data, self._resolve)
        except _MALFORMED as exc:
            self.fail("protocol_violation", f"malformed value: {exc!r}"[:500])

    def _resolve(self, ref: dict[str, Any]) -> Any:
        if "cb" in ref:
            return self.mine.get(ref["cb"])
        if "argpart" in ref:  # the test's own object, returned by a call it was passed to
            number, parts = ref["argpart"], self.argument_parts
            if parts is None or set(ref) != {"argpart"} or type(number) is not int:
                raise ValueError("a reference to an argument outside a call's result")
            if not 0 <= number < len(parts):
                raise ValueError("a reference to an argument part the call was not given")
            return parts[number]
        if set(ref) == {"builtin"}:  # one the test passed, handed back (`handles.Server`)
            return self.mine.builtin(ref["builtin"])
        if not ({"handle", "type"} < set(ref) <= {"handle", "type", "of", "class"}):
            raise ValueError("not a reference the candidate may send")
        ident = ref["handle"]
        if type(ident) is not int:
            raise ValueError("a handle id that is not an int")
        known = self.handles.get(ident)
        if known is None:
            known = self.handles[ident] = self._proxy(ident, ref)
        return known

    def _proxy(self, ident: int, ref: dict[str, Any]) -> Any:
        """The judge's stand-in for a candidate object: a class for a class (``"class"``), else
        an instance of the stand-in for its class (``"of"``), so class identity is the
        candidate's (``remote``)."""
        if "class" in ref:
            info = ref["class"]
            name, calls = safe_name(info["name"]), info["calls"]
            if type(calls) is not bool:
                raise ValueError("a class description without a bool 'calls'")
            return remote_class(self, ident, name, calls, binds=info.get("binds") is True)
        kind = self._resolve(ref["of"])
        if type(kind) is not RemoteClass:
            raise ValueError("a candidate object whose class is not a class")
        proxy: RemoteHandle = object.__new__(kind)  # type: ignore[arg-type]  # a stand-in class
        RemoteHandle.__init__(proxy, self, {"handle": ident, "type": str(ref["type"])[:100]})
        return proxy

    # -- requests --------------------------------------------------------------------------

    def exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        """Send ``request``, serve callbacks until its reply comes, return the reply."""
        if self.fault:
            raise Fault(self.fault)
        try:
            self.check_kept()
            self._send(request)
            while True:
                frame = read_frame(self.channel, self.deadline)
                if not isinstance(frame, dict):
                    self.fail("protocol_violation", "a frame that is not an object")
                self._show(frame)
                self._advance_copies(frame.get("consumed"))
                self._follow_globals(frame.get("globals"))
                self._set_attributes(frame.get("attributes"))
                if "callback" not in frame:
                    return frame
                try:
                    reply = self._serve(frame)
                    self.check_kept()  # the callback (test code) may have changed a copy
                    self._send(reply)
                except Fault:  # the reply could not be sent; the candidate still waits for one
                    if self.fault:
                        raise
                    write_frame(self.channel, {"raised": describe_exception(RuntimeError())})
        except TimeoutError:
            self.fail("timeout", "the candidate ran past its time limit")
        except (ChannelClosed, OSError):
            self.fail("candidate_exited", "the candidate process ended during a call")
        except (ValueError, RecursionError, MemoryError) as exc:  # not JSON, or nested to crash
            self.fail("protocol_violation", f"unreadable reply: {exc!r}"[:500])

    def _send(self, frame: dict[str, Any]) -> None:
        """Send ``frame``; one too large for the candidate to read (a test's 20 MiB list) is a
        value that cannot cross, not a broken channel (the candidate would exit on it)."""
        try:
            write_frame(self.channel, frame)
        except FrameTooLarge as exc:
            self.fail("unserialisable", f"a value too large to cross: {exc}", sticky=False)

    def _advance_copies(self, consumed: Any) -> None:
        """The test's iterators where the candidate left their copies (``copies``)."""
        problem = self.mine.copies.advance(consumed)
        if problem == "malformed":
            self.fail("protocol_violation", "a malformed count of copied items taken")
        if problem == "changed":  # noted, not raised: the frame still needs its answer
            self.last_fault = (
                "unserialisable",
                "the test's iterator changed while the candidate held a copy of its items",
            )

    def check_kept(self) -> None:
        """The test's changes to its copies of the candidate's globals, made to the candidate's
        objects in place; one that cannot be is a sticky fault (``mirrors``)."""
        name = self.kept.changed_by_test()
        while name is not None:
            copy = self.kept.get(name)
            if not can_write_back(copy):
                self.fail(
                    "unserialisable",
                    f"the test changed its copy of module global {name[:100]}, whose items are"
                    " containers; the candidate's own object cannot follow exactly, so no later"
                    " call can be judged on its module's state",
                )
            data = self.kept.in_step(name)  # first: the request below checks the copies again
            reply = self.exchange({"op": "setglobal", "name": name, "value": data})
            if reply.get("value") is not True:
                detail = str(reply.get("unserialisable", "refused"))[:300]
                self.fail("unserialisable", f"the test changed its copy of a global: {detail}")
            name = self.kept.changed_by_test()

    def _follow_globals(self, changed: Any) -> None:
        """The candidate's new state of the globals the judge keeps copies of (``mirrors``)."""
        if changed is None:
            return
        if type(changed) is not dict:
            self.fail("protocol_violation", "a malformed report of changed globals")
        for name, data in changed.items():
            updated = None if data is None else self.in_value(data)
            if not self.kept.follow(str(name), updated):
                # Noted, not raised (the frame still needs its answer); sticky: the tests'
                # namespace may keep the stale copy for later tests.
                self.fault = "unserialisable"
                self.last_fault = (
                    "unserialisable",
                    f"the candidate changed module global {str(name)[:100]}, whose items are"
                    " containers, while the test holds its copy: the copy cannot follow exactly",
                )

    def global_value(self, name: str) -> Any:
        """The candidate's global ``name`` as the tests see it: a mutable one is the judge's
        one copy of it, kept in step (``mirrors``); anything else as it crosses."""
        kept = self.kept.get(name)
        return kept if kept is not None else self.operate("get", {"global": name})

    def call(self, target: dict[str, Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Call a candidate function or object; arguments it changed in place are written back
        to the test's own objects, as in-process."""
        encoded = [self.out_value(a) for a in args]
        encoded_kwargs = {str(k): self.out_value(v) for k, v in kwargs.items()}
        request = {"op": "call", "target": target, "args": encoded, "kwargs": encoded_kwargs}
        before = by_position_and_name(encoded, encoded_kwargs)
        targets = by_position_and_name(list(args), {str(k): v for k, v in kwargs.items()})
        parts = argument_parts(list(targets.values()))  # as sent: callbacks may change them
        reply = self.exchange(request)
        raised = self._raised(reply)
        try:
            after = by_position_and_name(reply["args"], reply["kwargs"])
            changed = changed_keys(before, after)
        except _MALFORMED as exc:
            self.fail("protocol_violation", f"malformed reply: {exc!r}"[:500])
        updates = {key: self.in_value(after[key]) for key in changed}
        self.argument_parts = parts  # what ``{"argpart": n}`` names, in this result only
        try:
            value = None if raised is not None else self._value(reply.get("value"), targets)
        finally:
            self.argument_parts = None
        if any(not can_write_back(targets[key]) for key in changed):
            self.fail(
                "unserialisable",
                "the candidate changed an argument in a way that cannot be copied back"
                " (a container nested in it, or one the test may also hold elsewhere)",
                sticky=False,
            )
        for key, updated in updates.items():
            write_back(targets[key], updated)
        if raised is not None:
            raise raised
        return value

    def operate(self, op: str, target: dict[str, Any], *args: Any) -> Any:
        """One operation on a candidate object (attribute, item, iteration, length...)."""
        request = {"op": op, "target": target, "args": [self.out_value(a) for a in args]}
        # A module's mutable attribute (``from pkg.mod import REGISTRY``) is a kept global too.
        attribute = (target["handle"], args[0]) if op == "getattr" and "handle" in target else None
        known = self.kept.get(self.kept_attributes.get(attribute, ""))
        if known is not None:
            return known
        reply = self.exchange(request)
        value = self._answer(reply, iterating=op == "next")
        key = reply.get("kept")
        if type(key) is not str or not is_mutable(value):
            return value
        if attribute is not None:
            self.kept_attributes[attribute] = key
        known = self.kept.get(key)  # already the tests' (read under its other name): that one
        return known if known is not None else self.kept.adopt(key, value)

    def import_module(self, name: str) -> Any:
        """The candidate's module ``name`` (imported there, never here), as a remote module."""
        if name not in self.modules:
            self.modules[name] = self._answer(self.exchange({"op": "import", "name": name}))
        return self.modules[name]
