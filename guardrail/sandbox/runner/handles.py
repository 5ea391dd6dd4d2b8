"""The candidate's side of the channel: the server of the judge's requests.

Requests (``{"op": ...}``) name a target: a global of the candidate (``{"global": name}``) or a
handle. A value that is not plain data (a generator, an object, a bound method, a module) is
kept here in a per-job table and crosses as ``{"handle": id, "type": name, "of": <its class>}``
(a class: ``{"handle": id, "type": name, "class": {"name": ..., "calls": <instances callable>}}``);
the judge drives it through further requests (iterate, call, attribute, item, length,
membership). The same object always gets the same id, so identity (``iter(gen) is gen``) holds
in the judge. The table is capped: past it a value is `Unserialisable`, never dropped silently.
The table, and what the test's own objects become here (`stubs`, `signatures`), are
`references`; what a request printed rides on the next frame (`printed`).

Nothing here is trusted by the judge: a hostile candidate can replace all of it and answer what
it likes. What the judge guarantees holds regardless: it compares only plain data, and a handle
never decides an equality, a hash, a truth value or a text (``remote``).
"""

from __future__ import annotations

import importlib
import json
import sys
import types
from collections.abc import Callable
from typing import Any

from . import references
from .codec import (
    Unserialisable,
    by_position_and_name,
    can_write_back,
    decode,
    encode,
    plain_or_none,
    stop_arguments,
    write_back,
)
from .exceptions import describe_exception, rebuild_exception
from .framing import FrameTooLarge, read_frame, write_frame
from .identity import (
    argument_parts,
    check_not_kept,
    check_result,
    mutable_parts,
    reference_counts,
)
from .method_reads import read_attribute
from .mirrors import Kept, is_mutable
from .object_table import ObjectTable
from .printed import MAX_PRINTED, Tee
from .references import MAX_HANDLES
from .retrieved import NotRetrieved

# `calls` imports these from here (MAX_PRINTED is `printed`'s, the other two `codec`'s).
__all__ = ["MAX_PRINTED", "Server", "plain_or_none", "stop_arguments"]

MAX_DRAIN_BYTES = 4_000_000  # of one drain reply's items (JSON): well under a frame


class Server:
    """Serves the judge's requests on ``namespace`` over ``channel`` until it closes."""

    def __init__(
        self,
        channel: int,
        namespace: dict[str, Any],
        invoke: Callable[[Any, list[Any], dict[str, Any]], Any] | None = None,
        report: Callable[[], dict[str, Any]] | None = None,
    ) -> None:
        self.channel = channel
        self.namespace = namespace
        # Every call of the tests, through the checks that what they call is the retrieved
        # definition (`retrieved`); what those checks found, for the judge's last look.
        self.invoke = invoke or _plain_call
        self.report = report
        self.handles = ObjectTable(
            MAX_HANDLES, "objects crossed as handles"
        )  # the candidate's objects
        self.stubs: dict[int, Any] = {}  # judge object id -> its stub (`stubs`, `signatures`)
        # id -> (object, the judge's reference to it): the test's functions and builtins the
        # judge sent, which go back as it described them
        self.echoed: dict[int, tuple[Any, dict[str, Any]]] = {}
        self.consumed: dict[int, int] = {}  # copied judge iterator -> items taken, not yet told
        self.reported: dict[int, dict[str, str]] = {}  # stub id -> attribute -> its text sent
        self.out = Tee(sys.stdout)
        sys.stdout = self.out
        # The mutable globals the judge holds copies of:
        self.kept = Kept(namespace, self.out_value)
        self.scratch: dict[str, Any] | None = None  # the doctest examples' copy of the globals

    def serve(self) -> None:
        while True:
            self._send(self.answer(read_frame(self.channel)))

    def _send(self, frame: dict[str, Any]) -> None:
        said = self.out.drain()
        if self.consumed:  # items of the test's copied iterators taken since the last frame
            said["consumed"] = {str(ident): count for ident, count in self.consumed.items()}
            self.consumed.clear()
        changed = self.kept.changes()
        if changed:  # the judge's copies of its mutable globals follow (``mirrors``)
            said["globals"] = changed
        attributes = references.attribute_changes(self)
        if attributes:  # set on the test's own functions by the judge (``stubs``)
            said["attributes"] = attributes
        try:
            write_frame(self.channel, {**frame, **said})
        except FrameTooLarge as exc:  # the judge would refuse it as a broken protocol
            write_frame(self.channel, {"unserialisable": str(exc), **said})

    # -- references (``references``) -------------------------------------------------------

    handle_of = references.handle_of
    _handle = references.handle
    _keep = references.keep
    resolve = references.resolve
    _stub = references.stub

    def out_value(self, value: object) -> Any:
        return encode(value, other=self.handle_of)

    def in_value(self, data: Any) -> Any:
        return decode(data, self.resolve)

    # -- requests --------------------------------------------------------------------------

    def answer(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to one request of the judge; never raises for the candidate's faults."""
        op = request.get("op")
        try:
            if op == "import":
                return {"value": self.out_value(importlib.import_module(str(request["name"])))}
            if op == "setglobal":  # the test changed its copy of a kept global (``mirrors``)
                return self.kept.write(str(request["name"]), self.in_value(request["value"]))
            if op == "define":  # a class a doctest example defines (``doctesting``): its
                # decorators and base classes may be the definition (checked as calls are)
                return {"value": self.out_value(self.invoke(self.define, [request], {}))}
            if op == "retrieved":  # after the last test (``retrieved``)
                return {"retrieved": None if self.report is None else self.report()}
            target = self.in_value(request["target"])
            args = [self.in_value(item) for item in request.get("args", [])]
            kwargs = {str(k): self.in_value(v) for k, v in request.get("kwargs", {}).items()}
        except Unserialisable as exc:
            return {"unserialisable": str(exc)}
        except NotRetrieved as exc:
            return {"not_retrieved": str(exc)[:2000]}
        except BaseException as exc:  # a missing global; a module whose import raised anything
            return {"raised": describe_exception(exc)}
        if op == "drain":
            try:
                drained: dict[str, Any] = self.invoke(self.drain, [target, args], {})
            except NotRetrieved as exc:
                return {"not_retrieved": str(exc)[:2000]}
            return drained
        if op == "call":
            # A call through a handle (a method, an object) may keep its arguments: it is live.
            # A plain function (a module's, as the tests' bound names are) may not.
            keeps = "handle" in request["target"] and not isinstance(target, types.FunctionType)
            reply: dict[str, Any] = self.call(target, args, kwargs, keeps)
            return reply
        try:  # every operation may run the candidate's code: checked as calls are
            value = self.invoke(_OPERATIONS[str(op)], [target, *args], {})
        except StopIteration as stop:
            return {"stop": plain_or_none(stop.args)}  # the iteration ended: not an error
        except NotRetrieved as exc:
            return {"not_retrieved": str(exc)[:2000]}
        except BaseException as exc:
            return {"raised": describe_exception(exc)}
        try:
            reply = {"value": self.out_value(value)}
            holder = self._holder(op, request["target"], target, args)
            if holder is not None and is_mutable(value):
                reply["kept"] = self.kept.keep(*holder, value, reply["value"])
        except Unserialisable as exc:
            return {"unserialisable": str(exc)}
        return reply

    def _holder(
        self, op: Any, ref: dict[str, Any], target: Any, args: list[Any]
    ) -> tuple[dict[str, Any], str] | None:
        """Where a value the judge read lives, if it is a module global (``mirrors``): the
        candidate's global, or a module's attribute (``from pkg.mod import REGISTRY``)."""
        if op == "get" and "global" in ref:
            return self.namespace, str(ref["global"])
        if op == "getattr" and isinstance(target, types.ModuleType) and args:
            return vars(target), str(args[0])
        return None

    def define(self, request: dict[str, Any]) -> Any:
        """Run a doctest example's ``class`` statement as doctest would: in a copy of the
        module's globals (made once per job, shared by the examples' classes)."""
        if self.scratch is None:
            self.scratch = dict(self.namespace)
        exec(compile(str(request["source"]), "<doctest>", "exec"), self.scratch)
        return self.scratch[str(request["name"])]

    def drain(self, target: Any, args: list[Any]) -> dict[str, Any]:
        """Up to ``args[0]`` items of an iterator the judge will exhaust anyway (``list(h)``),
        in one reply, and how it ended if it did (as one ``next`` at a time would have said)."""
        if not hasattr(type(target), "__next__"):
            return {"items": [], "iterator": False}
        cap = args[0] if args and type(args[0]) is int else 1
        items: list[Any] = []
        size = 0
        try:
            while len(items) < cap and size < MAX_DRAIN_BYTES:
                items.append(self.out_value(next(target)))
                size += len(json.dumps(items[-1]))
        except StopIteration as stop:
            return {"items": items, "end": {"stop": plain_or_none(stop.args)}}
        except Unserialisable as exc:
            return {"items": items, "end": {"unserialisable": str(exc)}}
        except BaseException as exc:
            return {"items": items, "end": {"raised": describe_exception(exc)}}
        return {"items": items}

    def call(self, target: Any, args: list[Any], kwargs: dict[str, Any], keeps: bool) -> Any:
        """Call ``target`` and build the reply: the value or the exception, and the arguments'
        state after the call (also when it raised: a function that changes its input and then
        fails has changed it, and the test may look). Identity the copies would hide is refused
        (identity.py), except the references a live result or object legitimately keeps: a
        generator holds its argument, an object the values given to its methods. Residual risk
        of that exception: the candidate's copy and the test's object then diverge unseen if
        either changes later (a generator that changes its input while it is iterated)."""
        try:
            tracked = mutable_parts([*args, *kwargs.values()])
        except Unserialisable as exc:
            return {"unserialisable": str(exc)}
        parts: dict[int, tuple[object, Any]] = {}  # held from before the counts to after
        for number, part in enumerate(argument_parts([*args, *kwargs.values()])):
            parts.setdefault(id(part), (part, {"argpart": number}))
        before = reference_counts(tracked)
        handles_before = len(self.handles)
        reply: dict[str, Any] = {}
        try:
            result = self.invoke(target, args, kwargs)
        except NotRetrieved as exc:  # not the candidate's exception: nothing it did is judged
            return {"not_retrieved": str(exc)[:2000]}
        except BaseException as exc:
            reply["raised"] = describe_exception(exc)
        else:
            try:
                reply["value"] = self._result(result, args, kwargs, tracked, parts)
            except Unserialisable as exc:
                return {"unserialisable": str(exc)}
            finally:
                del result
        try:
            if not (keeps or len(self.handles) > handles_before):
                check_not_kept(tracked, before)
            reply["args"] = [self.out_value(a) for a in args]
            reply["kwargs"] = {k: self.out_value(v) for k, v in kwargs.items()}
        except Unserialisable as exc:
            return {"unserialisable": str(exc)}
        return reply

    def _result(
        self,
        result: Any,
        args: list[Any],
        kwargs: dict[str, Any],
        tracked: list[Any],
        parts: dict[int, tuple[object, Any]],
    ) -> Any:
        """The result as data; an argument returned as itself crosses as a reference to it, and
        so do parts of the arguments inside it (``identity``)."""
        for key, argument in [*enumerate(args), *kwargs.items()]:
            if result is argument:  # of any type: ``f(s) is s`` holds for a str as in-process
                return {"arg": key}
        check_result(result, tracked)
        encoded = encode(result, other=self.handle_of, parts=parts)
        name = self.kept.name_of(result)
        if name is not None:  # one of its module's globals: the judge's copy of it (``mirrors``)
            return {
                "global": self.kept.keep(self.namespace, name, result, encoded),
                "copy": encoded,
            }
        return encoded

    def callback(self, ident: int, op: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        """Run a judge object: send the request, serve the judge's nested requests meanwhile."""
        self._send(
            {
                "callback": ident,
                "op": op,
                "args": [self.out_value(a) for a in args],
                "kwargs": {str(k): self.out_value(v) for k, v in kwargs.items()},
            }
        )
        while True:
            frame = read_frame(self.channel)
            if "op" not in frame:
                break
            self._send(self.answer(frame))
        changed = frame.get("changed")
        if type(changed) is list:  # what the judge's callback changed of our arguments
            self._write_back(by_position_and_name(list(args), kwargs), changed)
        if "stop" in frame:
            raise StopIteration(*stop_arguments(frame["stop"]))
        if "raised" in frame:
            raise rebuild_exception(frame["raised"])
        return self.in_value(frame["value"])

    def _write_back(self, originals: dict[int | str, Any], changed: list[Any]) -> None:
        for item in changed:
            if type(item) is not list or len(item) != 2 or type(item[0]) not in (int, str):
                continue
            if can_write_back(originals.get(item[0])):
                write_back(originals[item[0]], self.in_value(item[1]))


def _plain_call(target: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
    return target(*args, **kwargs)


def _set_attribute(target: Any, name: Any, value: Any) -> None:
    setattr(target, str(name), value)


_OPERATIONS: dict[str, Any] = {
    "get": lambda target: target,
    "getattr": read_attribute,  # known by identity: a judged method's reads are checked
    "setattr": _set_attribute,
    "getitem": lambda target, key: target[key],
    "setitem": lambda target, key, value: target.__setitem__(key, value),
    "delitem": lambda target, key: target.__delitem__(key),
    "iter": iter,
    "next": next,
    "len": len,
    "contains": lambda target, item: item in target,
    # Its own text, asked only while a doctest example displays it (``showing``).
    "repr": repr,
    "str": str,
    "format": lambda target, spec: format(target, str(spec)),
}
