"""Which labelled sandbox containers on an engine are provably dead, and removing them.

An engine may be shared by many guardrail processes on many hosts (CI jobs, a team's remote
engine), so a new pool's sweep must never remove a container another live pool is using. A
container's owner label (``host:pid:nonce``) cannot be updated, so liveness is decided by what
the container itself shows, with a dead-man's switch built into how it runs:

* Every container is created with stdin attached once (``StdinOnce``): the engine closes its
  stdin when the owner's attach connection goes away, the supervisor (PID 1) reads end-of-file
  and exits. An owner that crashes, is killed or loses its host leaves only *exited* containers
  (the engine notices a vanished TCP peer through keepalive; a unix socket at once).
* So a container is removed when it is provably dead:
  - it has exited (or is ``dead``) for longer than ``grace_s`` - the grace leaves a live owner
    time to read why its container died before removing it itself;
  - it was created but never started for longer than `CREATED_GRACE_S` (its owner crashed
    between create and start);
  - its owner names this host and a pid that no longer exists.
* A running container of another host is never removed: nothing proves its owner gone (a hung
  owner keeps its connection). ``guardrail sandbox clean --all`` removes those on purpose.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
from datetime import UTC, datetime
from typing import Any

__all__ = ["CREATED_GRACE_S", "EXITED_GRACE_S", "LABEL", "OWNER_LABEL", "remove_dead"]

LABEL = "guardrail.sandbox"
OWNER_LABEL = "guardrail.owner"
EXITED_GRACE_S = 60.0
CREATED_GRACE_S = 600.0  # a start on a loaded engine can take a while; nobody waits 10 minutes


def remove_dead(
    client: Any, *, include_live_owners: bool = False, grace_s: float = EXITED_GRACE_S
) -> list[str]:
    """Remove the labelled containers on ``client``'s engine that are provably dead; their ids."""
    removed = []
    now = _engine_now(client)
    host = socket.gethostname()
    for summary in client.api.containers(all=True, filters={"label": LABEL}):
        container_id = summary["Id"]
        if not include_live_owners and not _provably_dead(client, summary, now, host, grace_s):
            continue
        with contextlib.suppress(Exception):  # removed by someone else meanwhile: fine
            client.api.remove_container(container_id, force=True)
            removed.append(container_id)
    return removed


def _provably_dead(
    client: Any, summary: dict[str, Any], now: datetime, host: str, grace_s: float
) -> bool:
    owner_host, _, rest = str((summary.get("Labels") or {}).get(OWNER_LABEL, "")).partition(":")
    pid = rest.partition(":")[0]
    if owner_host == host and pid.isdigit() and not _pid_alive(int(pid)):
        return True
    state = summary.get("State", "")
    if state == "created":
        created = datetime.fromtimestamp(int(summary.get("Created", 0)), UTC)
        return (now - created).total_seconds() > CREATED_GRACE_S
    if state in {"exited", "dead"}:
        try:
            state_now = client.api.inspect_container(summary["Id"])["State"]
            finished = _timestamp(str(state_now["FinishedAt"]))
        except Exception:
            return False
        return (now - finished).total_seconds() > grace_s
    return False  # running, paused, restarting, being removed: its owner may be alive


def _engine_now(client: Any) -> datetime:
    """The engine's clock: container timestamps come from it, not from this host's."""
    return _timestamp(str(client.info()["SystemTime"]))


def _timestamp(text: str) -> datetime:
    # RFC 3339 with nanoseconds ("2026-12-01T09:07:59.104043966Z"); Python parses microseconds.
    text = re.sub(r"(\.\d{6})\d+", r"\1", text.replace("Z", "+00:00"))
    return datetime.fromisoformat(text)


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
