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
    this is the stand-in until it ships; the alias binding moves to the host with it.
    """
    code, entry_point = str(job["code"]), str(job["entry_point"])
    namespace: dict[str, Any] = {"__name__": "__candidate__", "__builtins__": builtins}
    exec(compile(code, "<candidate>", "exec"), namespace)
    if not job.get("bind") and not callable(namespace.get(entry_point)):  # bind: the host's plan
        functions = sorted(_functions(namespace))
        choices = [name for name in plausible_functions(code) if name in functions]
        if len(choices) != 1:
            defined = ", ".join(functions) or "no functions"
            raise LoadRefused(
                {
                    "type": "MissingEntryPoint",
                    "bases": [],
                    "message": f"the tests call {entry_point!r}; the candidate defines {defined}",
                }
            )
        namespace[entry_point] = namespace[choices[0]]
        namespace["__alias__"] = choices[0]
    return namespace


def _functions(namespace: dict[str, Any]) -> list[str]:
    return [
        name
        for name, value in namespace.items()
        if callable(value) and getattr(value, "__module__", None) == "__candidate__"
    ]


def candidate_serve(channel: int) -> None:
    """Read the job (the channel's first frame), load it and answer the judge's requests until
    the channel closes. The code arrives here and nowhere else, so no later candidate can find
    it."""
    job = read_frame(channel)
    try:
        namespace = load(job)
    except LoadRefused as refused:
        write_frame(channel, {"loaded": False, **refused.greeting})
        return
    except BaseException as exc:
        write_frame(channel, {"loaded": False, **describe_exception(exc)})
        return
    alias = namespace.pop("__alias__", None)
    write_frame(channel, {"loaded": True, "functions": _functions(namespace), "alias": alias})
    Server(channel, namespace).serve()
