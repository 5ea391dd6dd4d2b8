"""Why a sandbox container ended, in the engine's own words, and whether its image has python3.

Read after a container died or failed to start, before it is removed: its state, exit code,
whether the out-of-memory killer struck, the engine's error and the tail of the supervisor's
stderr, as one plain line for an error message or a verdict. Works on any docker-py client.
"""

from __future__ import annotations

import contextlib
from typing import Any

__all__ = ["cause_of_death", "has_python"]

_DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


def cause_of_death(client: Any, container_id: str, stderr: bytes) -> str:
    """State, exit code, OOM, engine error and ``stderr``'s tail, as one line."""
    state = client.api.inspect_container(container_id)["State"]
    if state.get("Running"):  # EOF reaches us a moment before the engine records the exit
        with contextlib.suppress(Exception):
            client.api.wait(container_id, timeout=2)
        state = client.api.inspect_container(container_id)["State"]
    parts = [f"container {state.get('Status', '?')}, exit code {state.get('ExitCode')}"]
    if state.get("OOMKilled"):
        parts.append("killed by the out-of-memory killer")
    if state.get("Error"):
        parts.append(f"engine error: {printable(str(state['Error'])[:300])}")
    tail = printable(stderr[-500:].decode(errors="replace"))
    if tail:
        parts.append(f"stderr: {tail}")
    return ", ".join(parts)


def has_python(client: Any, container_id: str) -> bool:
    """Whether ``python3`` is a file on the container's PATH, read from its filesystem without
    running anything (the container may be unable to start)."""
    config = client.api.inspect_container(container_id)["Config"]
    env = dict(item.partition("=")[::2] for item in config.get("Env") or [])
    for directory in filter(None, (env.get("PATH") or _DEFAULT_PATH).split(":")):
        try:
            stream, _stat = client.api.get_archive(container_id, f"{directory}/python3")
        except Exception as exc:
            if getattr(exc, "status_code", None) == 404:  # docker.errors.NotFound: not here
                continue
            raise
        for _ in stream:  # drain the response so the connection can be reused
            pass
        return True
    return False


def printable(text: str) -> str:
    """One line of plain text: an image's output goes into messages, never raw control bytes."""
    return " ".join("".join(c if c.isprintable() else " " for c in text).split())
