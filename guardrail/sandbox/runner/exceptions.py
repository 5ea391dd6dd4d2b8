"""Exceptions across the channel: described by the side that raised, rebuilt by the other.

A description is data: the type's name, the names of its builtin bases, the message (capped),
``args`` when they encode as plain data and ``name`` (NameError, ImportError). The judge rebuilds
a builtin exception as that builtin with its arguments (``e.args == (...)``, a KeyError's text);
anything else becomes a stand-in class named after it (reduced to identifier characters, so a
name is a word and never a fault) under the nearest builtin base. The candidate rebuilds what a
test's callback raised the same way, so its ``except ValueError`` sees a ValueError.

A description also lists the errnos of the OSErrors in the exception and its causes
(``errnos``): the judge reads a refused facility from them (`seccomp.refused_facility`).
"""

from __future__ import annotations

import builtins
import contextlib
from typing import Any

from .codec import Unserialisable, decode, encode, message_of

MAX_NAME = 100
# The judge's number for an exception one of its callbacks raised: rebuilt in the candidate it
# keeps the number, so that raised on from there it is the judge's own exception object again
# (a test's ``except MyError`` catches it, as in-process).
THROWN = "judge_exception"
_NEVER_REBUILT = (StopIteration, StopAsyncIteration)


def safe_name(name: object) -> str:
    """An exception type name as plain identifier characters, capped: candidate text is data."""
    text = str(name)[:MAX_NAME]
    return "".join(c if c.isascii() and (c.isalnum() or c == "_") else "_" for c in text) or "_"


class CandidateRaised(Exception):
    """Stand-in for an exception that is not a builtin one."""


class CandidateRaisedBase(BaseException):
    """Stand-in for a ``SystemExit``, ``KeyboardInterrupt`` or other exception that is not an
    `Exception`: a test's ``except Exception`` must not catch it (in-process it would not), so
    it stays outside that family."""


def describe_exception(exc: BaseException) -> dict[str, Any]:
    bases = [k.__name__ for k in type(exc).__mro__ if getattr(builtins, k.__name__, None) is k]
    info: dict[str, Any] = {
        "type": type(exc).__name__,
        "bases": bases,
        "message": message_of(exc, 2000),
    }
    with contextlib.suppress(Unserialisable, RecursionError, TypeError, ValueError):
        info["args"] = encode(tuple(exc.args))  # else the message alone says what happened
    name = getattr(exc, "name", None) if isinstance(exc, NameError | ImportError) else None
    if type(name) is str:
        info["name"] = name[:MAX_NAME]
    thrown = getattr(exc, THROWN, None)
    if type(thrown) is int:
        info[THROWN] = thrown
    errnos = _errnos(exc)
    if errnos:
        info["errnos"] = errnos
    return info


def _errnos(exc: BaseException) -> list[int]:
    """The ``errno`` of each OSError in the exception and its causes (a wrapped refusal, say)."""
    found: list[int] = []
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None:
            break
        if isinstance(seen, OSError) and type(seen.errno) is int:
            found.append(seen.errno)
        seen = seen.__cause__ or seen.__context__
    return found


def rebuild_exception(info: dict[str, Any]) -> BaseException:
    """The exception ``info`` describes, as a builtin where it names one (see the docstring)."""
    name = safe_name(info.get("type", "Exception"))
    message = str(info.get("message", ""))
    args = _arguments(info, message)
    for base_name in info.get("bases", []):
        base = getattr(builtins, str(base_name), None)
        if base in _NEVER_REBUILT:
            break  # raised inside a test, it would end the test's map() or filter() early
        if isinstance(base, type) and issubclass(base, Exception):
            cls: type[Exception] = base if base_name == name else type(name, (base,), {})
            try:
                rebuilt: BaseException = cls(*args)
            except TypeError:  # UnicodeDecodeError and others insist on their own arguments
                try:
                    rebuilt = cls(message)
                except TypeError:
                    break
            if isinstance(rebuilt, NameError | ImportError) and type(info.get("name")) is str:
                rebuilt.name = info["name"]
            return _numbered(rebuilt, info)
    family = CandidateRaised if "Exception" in info.get("bases", []) else CandidateRaisedBase
    stand_in: type[BaseException] = type(name, (family,), {})
    return _numbered(stand_in(message), info)


def _numbered(exc: BaseException, info: dict[str, Any]) -> BaseException:
    if type(info.get(THROWN)) is int:
        with contextlib.suppress(AttributeError, TypeError):
            setattr(exc, THROWN, info[THROWN])
    return exc


def _arguments(info: dict[str, Any], message: str) -> tuple[Any, ...]:
    if "args" in info:
        try:
            args = decode(info["args"])
        except (ValueError, TypeError, KeyError, RecursionError):
            args = None
        if type(args) is tuple:
            return args
    return (message,)
