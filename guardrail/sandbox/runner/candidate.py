"""The candidate process: load the candidate's code and answer the judge's calls."""

from __future__ import annotations

import builtins
from typing import Any

from .codec import MUTABLE, Unserialisable, decode, encode, message_of
from .framing import read_frame, write_frame
from .identity import check_not_kept, check_result, mutable_parts, reference_counts
from .loader import LoadRefused, load


def _describe_exception(exc: BaseException) -> dict[str, Any]:
    bases = [k.__name__ for k in type(exc).__mro__ if getattr(builtins, k.__name__, None) is k]
    return {"type": type(exc).__name__, "bases": bases, "message": message_of(exc, 2000)}


def candidate_serve(channel: int) -> None:
    """Read the code (the channel's first frame), load it and answer the judge's calls until the
    channel closes. The code arrives here and nowhere else, so no later candidate can find it."""
    job = read_frame(channel)
    try:
        namespace = load(job)
    except LoadRefused as refused:
        write_frame(channel, {"loaded": False, **refused.greeting})
        return
    except BaseException as exc:
        write_frame(channel, {"loaded": False, **_describe_exception(exc)})
        return
    module = str(namespace.get("__name__"))
    functions = {
        name: value
        for name, value in namespace.items()
        if callable(value) and getattr(value, "__module__", None) == module
    }
    # The host decided what the tests' names are bound to (guardrail.binding); absent: itself.
    entry_point = str(job["entry_point"])
    bind: dict[str, str] = job.get("bind") or {entry_point: entry_point}
    unbound = [name for name, target in bind.items() if not callable(namespace.get(target))]
    if unbound:
        defined = ", ".join(sorted(functions)) or "no functions"
        write_frame(
            channel,
            {
                "loaded": False,
                "type": "MissingEntryPoint",
                "bases": [],
                "message": f"the tests call {unbound[0]!r}; the candidate defines {defined}",
            },
        )
        return
    functions.update({name: namespace[target] for name, target in bind.items()})
    write_frame(channel, {"loaded": True, "functions": sorted(functions)})
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
