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
    # No alias in the greeting: the host's plan (guardrail.binding) is the only word on it.
    write_frame(channel, {"loaded": True, "functions": _functions(namespace)})
    Server(channel, namespace).serve()
