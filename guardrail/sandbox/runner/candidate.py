"""The candidate process: load the candidate's code and answer the judge's calls."""

from __future__ import annotations

import builtins
from typing import Any

from .codec import Unserialisable, decode, encode, message_of
from .framing import read_frame, write_frame
from .static import plausible_functions


def _describe_exception(exc: BaseException) -> dict[str, Any]:
    bases = [k.__name__ for k in type(exc).__mro__ if getattr(builtins, k.__name__, None) is k]
    return {"type": type(exc).__name__, "bases": bases, "message": message_of(exc, 2000)}


def candidate_serve(channel: int) -> None:
    """Read the code (the channel's first frame), load it and answer the judge's calls until the
    channel closes. The code arrives here and nowhere else, so no later candidate can find it."""
    job = read_frame(channel)
    code, entry_point = str(job["code"]), str(job["entry_point"])
    namespace: dict[str, Any] = {"__name__": "__candidate__", "__builtins__": builtins}
    try:
        exec(compile(code, "<candidate>", "exec"), namespace)
    except BaseException as exc:
        write_frame(channel, {"loaded": False, **_describe_exception(exc)})
        return
    functions = {
        name: value
        for name, value in namespace.items()
        if callable(value) and getattr(value, "__module__", None) == "__candidate__"
    }
    alias = None
    if not callable(namespace.get(entry_point)):
        choices = [name for name in plausible_functions(code) if name in functions]
        if len(choices) != 1:
            defined = ", ".join(sorted(functions)) or "no functions"
            write_frame(
                channel,
                {
                    "loaded": False,
                    "type": "MissingEntryPoint",
                    "bases": [],
                    "message": f"the tests call {entry_point!r}; the candidate defines {defined}",
                },
            )
            return
        alias = choices[0]
        functions[entry_point] = functions[alias]
    write_frame(channel, {"loaded": True, "functions": sorted(functions), "alias": alias})
    while True:
        request = read_frame(channel)
        target = functions[request["name"]]
        args = [decode(item) for item in request["args"]]
        kwargs = {key: decode(item) for key, item in request["kwargs"].items()}
        outcome: dict[str, Any]
        try:
            outcome = {"value": target(*args, **kwargs)}
        except BaseException as exc:
            outcome = {"raised": _describe_exception(exc)}
        # The arguments' state after the call comes back even when it raised: a function that
        # changes its input and then fails has changed it, and the test may look.
        try:
            reply: dict[str, Any] = {
                "args": [encode(a) for a in args],
                "kwargs": {k: encode(v) for k, v in kwargs.items()},
            }
            if "value" in outcome:
                reply["value"] = encode(outcome["value"])
            else:
                reply["raised"] = outcome["raised"]
        except Unserialisable as exc:
            reply = {"unserialisable": str(exc)}
        write_frame(channel, reply)
