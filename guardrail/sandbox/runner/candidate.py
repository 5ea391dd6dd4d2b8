"""The candidate process: load the candidate's code and answer the judge's requests."""

from __future__ import annotations

from typing import Any

from .exceptions import describe_exception
from .framing import read_frame, write_frame
from .handles import Server
from .loader import LoadRefused, load


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
    it. What runs after the candidate's code is held in locals taken before it (`loader`)."""
    check_bound, functions, write, server = _check_bound, _functions, write_frame, Server
    refused_type, describe = LoadRefused, describe_exception
    job = read_frame(channel)
    try:
        loaded = load(job)
        check_bound(job, loaded.namespace)
    except refused_type as refused:
        write(channel, {"loaded": False, **refused.greeting})
        return
    except BaseException as exc:
        write(channel, {"loaded": False, **describe(exc)})
        return
    # No alias in the greeting: the host's plan (guardrail.binding) is the only word on it.
    greeting: dict[str, Any] = {"loaded": True, "functions": functions(loaded.namespace)}
    if loaded.report is not None:  # what the judge compares with its own compile of the text
        greeting["retrieved"] = loaded.report()
    write(channel, greeting)
    server(channel, loaded.namespace, loaded.invoke, loaded.report).serve()
