"""The candidate process: load the candidate's code and answer the judge's requests."""

from __future__ import annotations

import builtins
from typing import Any

from .exceptions import describe_exception
from .framing import read_frame, write_frame
from .handles import Server
from .static import plausible_functions


class LoadRefused(Exception):
    """The code cannot be judged; ``greeting`` is the frame to send (as ``loader.LoadRefused``)."""

    def __init__(self, greeting: dict[str, Any]) -> None:
        super().__init__(greeting.get("message", ""))
        self.greeting = greeting


def load(job: dict[str, Any]) -> dict[str, Any]:
    """The candidate's namespace, loaded without context: the code alone in ``__candidate__``.

    The same contract as ``loader.load`` (which also loads code inside its module), for which
    this is the stand-in until it ships. Without the host's ``bind`` it still guesses an alias
    (the one plausible function) as before; with it, the host's plan decides.
    """
    code, entry_point = str(job["code"]), str(job["entry_point"])
    namespace: dict[str, Any] = {"__name__": "__candidate__", "__builtins__": builtins}
    exec(compile(code, "<candidate>", "exec"), namespace)
    if not job.get("bind") and not callable(namespace.get(entry_point)):
        choices = [name for name in plausible_functions(code) if name in _functions(namespace)]
        if len(choices) == 1:
            namespace[entry_point] = namespace[choices[0]]
            namespace["__alias__"] = choices[0]
    return namespace


def _functions(namespace: dict[str, Any]) -> list[str]:
    module = namespace.get("__name__")
    return sorted(
        name
        for name, value in namespace.items()
        if callable(value) and getattr(value, "__module__", None) == module
    )


def _check_bound(job: dict[str, Any], namespace: dict[str, Any]) -> None:
    """Every name the tests call (the host's ``bind``; absent: the entry point) must name a
    callable of the candidate, or nothing could be judged."""
    entry_point = str(job["entry_point"])
    bind = job.get("bind") or {entry_point: entry_point}
    unbound = [name for name, target in bind.items() if not callable(namespace.get(str(target)))]
    if unbound:
        defined = ", ".join(_functions(namespace)) or "no functions"
        message = f"the tests call {unbound[0]!r}; the candidate defines {defined}"
        raise LoadRefused({"type": "MissingEntryPoint", "bases": [], "message": message[:2000]})


def candidate_serve(channel: int) -> None:
    """Read the job (the channel's first frame), load it and answer the judge's requests until
    the channel closes. The code arrives here and nowhere else, so no later candidate can find
    it."""
    job = read_frame(channel)
    try:
        namespace = load(job)
        _check_bound(job, namespace)
    except LoadRefused as refused:
        write_frame(channel, {"loaded": False, **refused.greeting})
        return
    except BaseException as exc:
        write_frame(channel, {"loaded": False, **describe_exception(exc)})
        return
    alias = namespace.pop("__alias__", None)
    write_frame(channel, {"loaded": True, "functions": _functions(namespace), "alias": alias})
    Server(channel, namespace).serve()
