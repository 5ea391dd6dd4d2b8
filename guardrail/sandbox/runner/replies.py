"""The judge's reading of the candidate's replies: a value, a rebuilt exception or the fault
it means, what the candidate printed, and the replies that must be of one kind (a bool for
``isinstance``, a capped text for a doctest display, a class for a defined class); methods of
`calls.Calls`.

Nothing a reply says is taken on trust: a "stop" ends an iteration only as the answer to
``next``, a returned argument or global must be one the judge knows, and an exception's
description becomes a stand-in (`exceptions.rebuild_exception`) unless it is the test's own.
"""

from __future__ import annotations

import contextlib
import io
import sys
from typing import TYPE_CHECKING, Any

from . import showing
from .codec import stop_arguments
from .exceptions import THROWN, rebuild_exception, safe_name
from .mirrors import is_mutable
from .printed import MAX_PRINTED
from .remote import RemoteClass
from .seccomp import refused_detail, refused_facility

if TYPE_CHECKING:
    from .calls import Calls

_STOP_ITERATION = {"type": "StopIteration", "bases": ["StopIteration", "Exception"], "message": ""}


class Discarded(io.TextIOBase):
    """The judge's stdout (its descriptor 1 is closed): the candidate's printed text lands here
    unless a test (a doctest checker) has put its own stream in place."""

    def write(self, text: str) -> int:
        return len(text)


class Fault(BaseException):
    """The call could not be judged; the fault kind is in ``args[0]``."""


def answer(self: Calls, reply: dict[str, Any], *, iterating: bool = False) -> Any:
    """The value of an operation's reply. A "stop" ends an iteration only as the answer to
    ``next``: answering a global's lookup, an attribute, an item or a length with it would
    raise StopIteration in the test, silently ending its ``all(map(...))`` early (verified);
    there it is the candidate's exception, a stand-in as for calls (`rebuild_exception`)."""
    if "stop" in reply:
        if iterating:
            raise StopIteration(*stop_arguments(reply["stop"]))
        raise rebuild_exception(_STOP_ITERATION)
    raised = self._raised(reply)
    if raised is not None:
        raise raised
    if "value" not in reply:
        self.fail("protocol_violation", "a reply without a value")
    return self.in_value(reply["value"])


def value(self: Calls, encoded: Any, targets: dict[int | str, Any]) -> Any:
    """The call's result: an argument the candidate returned as itself is the test's own
    object (written back first), so ``f(xs) is xs`` holds as it would in-process."""
    if type(encoded) is dict and set(encoded) == {"arg"}:
        if encoded["arg"] not in targets:
            self.fail("protocol_violation", "a returned argument that was not passed")
        return targets[encoded["arg"]]
    if type(encoded) is dict and set(encoded) == {"global", "copy"}:
        # The candidate returned one of its globals: the tests' copy of it (``mirrors``).
        name = str(encoded["global"])
        kept = self.kept.get(name)
        if kept is not None:  # in step: this frame's report was applied before
            return kept
        value = self.in_value(encoded["copy"])
        if not is_mutable(value):
            self.fail("protocol_violation", "a returned global that is not mutable")
        return self.kept.adopt(name, value)
    return self.in_value(encoded)


def raised(self: Calls, reply: dict[str, Any]) -> BaseException | None:
    """What the candidate raised, rebuilt; or the fault it means (see the module docstring)."""
    if "unserialisable" in reply:
        self.fail("unserialisable", str(reply["unserialisable"]), sticky=False)
    if "not_retrieved" in reply:  # what the tests call is not the retrieved text (`retrieved`)
        self.fail("missing_context", str(reply["not_retrieved"])[:500])
    raised = reply.get("raised")
    if raised is None:
        return None
    if not isinstance(raised, dict):
        self.fail("protocol_violation", "malformed exception in the reply")
    kind, message = raised.get("type"), str(raised.get("message", ""))[:400]
    facility = refused_facility(raised)
    if facility is not None:
        self.fail("refused_facility", refused_detail(facility, message), sticky=False)
    if kind in ("ImportError", "ModuleNotFoundError") and raised.get("name") in self.withheld:
        detail = f"the candidate imports a module of its package that was not shipped: {message}"
        self.fail("missing_context", detail, sticky=False)
    if kind == "ModuleNotFoundError":
        self.fail(
            "missing_dependency",
            f"the candidate imports a module the sandbox image lacks: {message}",
            sticky=False,
        )
    if kind == "PackageNotFoundError" and "ModuleNotFoundError" in (raised.get("bases") or []):
        detail = f"the candidate reads distribution metadata the sandbox lacks: {message}"
        self.fail("missing_context", detail, sticky=False)  # importlib.metadata's, at call time
    if not self.has_context and lacks_context(raised):
        detail = f"judged without its module (no context): {message}"
        self.fail("missing_context", detail, sticky=False)
    thrown = raised.get(THROWN)
    if type(thrown) is int and 0 <= thrown < len(self.thrown):
        original = self.thrown[thrown]
        if type(original).__name__ == safe_name(kind):
            return original  # the test's own exception, raised on through the candidate
    return rebuild_exception(raised)


def set_attributes(self: Calls, changes: Any) -> None:
    """Attributes the candidate set on the test's functions (``register(f)``), set on the
    test's own objects, as in-process; never a dunder name (the candidate's stubs keep those).
    One the object refuses cannot be reproduced: the test is not judged (noted, not raised: the
    frame still needs its answer)."""
    if changes is None:
        return
    if type(changes) is not list:
        self.fail("protocol_violation", "a malformed report of attributes set")
    for change in changes:
        if not (type(change) is list and len(change) == 3 and type(change[1]) is str):
            self.fail("protocol_violation", "a malformed report of an attribute set")
        ident, name, data = change
        if not name.isidentifier() or name.startswith("__"):
            self.fail("protocol_violation", "an attribute the candidate may not set")
        try:
            target = self.mine.get(ident)
        except ValueError:
            self.fail("protocol_violation", "an attribute set on no object of the test's")
        value = self.in_value(data)
        try:
            setattr(target, name, value)
        except Exception:
            self.last_fault = (
                "unserialisable",
                f"the candidate set attribute {name[:100]!r} of a test's object, which cannot"
                " take it as it would in-process",
            )


def show(self: Calls, frame: dict[str, Any]) -> None:
    """What the candidate printed, on the judge's stdout; a test's own stream that refuses it
    (closed) is the test's affair, never a fault of the candidate's. Output past the cap
    cannot be compared: a test that captures it (a doctest) cannot be judged, never FAIL."""
    printed = frame.get("printed")
    if type(printed) is str:
        with contextlib.suppress(Exception):
            sys.stdout.write(printed[:MAX_PRINTED])
    if frame.get("printed_cut") is True and not isinstance(sys.stdout, Discarded):
        detail = f"the candidate printed more than the {MAX_PRINTED} characters kept of it"
        self.last_fault = ("unserialisable", detail)


def lacks_context(info: dict[str, Any]) -> bool:
    """Whether an exception (by its description) says the code ran without its module: a name
    the module would define (the interpreter's NameError names it; one the code raises itself,
    ``raise NameError("no such option")``, is its answer), or a relative import. Only ever
    asked of a job with no context."""
    kind, message = info.get("type"), str(info.get("message", ""))
    relative = kind == "ImportError" and message.startswith("attempted relative import")
    return (kind == "NameError" and type(info.get("name")) is str) or relative


def ask_bool(self: Calls, question: str, value: Any, of: Any) -> bool:
    """``isinstance``/``issubclass`` asked of the candidate, whose answer must be a bool."""
    answer = self.call({"builtin": f"builtins:{question}"}, (value, of), {})
    if type(answer) is not bool:
        self.fail("protocol_violation", f"an answer to {question} that is not a bool")
    return answer


def shown_text(self: Calls, op: str, target: dict[str, Any], *args: Any) -> str:
    """A candidate object's own ``repr``/``str``/``format`` text, for a doctest display."""
    text = self.operate(op, target, *args)
    if type(text) is not str:
        self.fail("protocol_violation", f"a {op} text that is not a str")
    if len(text) > showing.MAX_SHOWN:
        self.fail(
            "unserialisable",
            f"a {op} text of {len(text)} characters (at most {showing.MAX_SHOWN})",
            sticky=False,
        )
    if showing.looks_plain(text):
        self.fail(
            "unserialisable",
            f"a candidate object whose {op} reads as plain data ({text[:60]!r}): a plain"
            " value would have crossed as one",
            sticky=False,
        )
    showing.record_use()
    return text


def define_class(self: Calls, source: str, name: str) -> Any:
    """The class a doctest example defines, defined in the candidate's process
    (``doctesting``); the tests get its stand-in."""
    value = self._answer(self.exchange({"op": "define", "source": source, "name": name}))
    if type(value) is not RemoteClass:
        self.fail("protocol_violation", "a defined class that is not a candidate class")
    return value
