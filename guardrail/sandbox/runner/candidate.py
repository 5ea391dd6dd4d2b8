"""The candidate process: load the candidate's code and answer the judge's calls."""

from __future__ import annotations

import builtins
from typing import Any

from .codec import MUTABLE, Unserialisable, decode, encode, message_of
from .framing import read_frame, write_frame
from .identity import check_not_kept, check_result, mutable_parts, reference_counts
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
        args = [decode(item) for item in request["args"]]
        kwargs = {key: decode(item) for key, item in request["kwargs"].items()}
        write_frame(channel, _call(functions[request["name"]], args, kwargs))


def _call(target: Any, args: list[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Call ``target`` and build the reply: the value or the exception, and the arguments' state
    after the call (also when it raised: a function that changes its input and then fails has
    changed it, and the test may look). Identity the copies would hide is refused (identity.py).
    """
    try:
        tracked = mutable_parts([*args, *kwargs.values()])
    except Unserialisable as exc:
        return {"unserialisable": str(exc)}
    before = reference_counts(tracked)
    reply: dict[str, Any] = {}
    try:
        result = target(*args, **kwargs)
    except BaseException as exc:
        reply["raised"] = _describe_exception(exc)
    else:
        try:
            reply["value"] = _encode_result(result, args, kwargs, tracked)
        except Unserialisable as exc:
            return {"unserialisable": str(exc)}
        finally:
            del result
    try:
        check_not_kept(tracked, before)
        reply["args"] = [encode(a) for a in args]
        reply["kwargs"] = {k: encode(v) for k, v in kwargs.items()}
    except Unserialisable as exc:
        return {"unserialisable": str(exc)}
    return reply


def _encode_result(result: Any, args: list[Any], kwargs: dict[str, Any], tracked: list[Any]) -> Any:
    """The result as plain data; an argument returned as itself crosses as a reference to it."""
    for key, argument in [*enumerate(args), *kwargs.items()]:
        if result is argument and type(argument) in MUTABLE:
            return {"arg": key}
    check_result(result, tracked)
    return encode(result)
