"""`RaySandbox`: the gate's sandboxes across the nodes of a Ray cluster.

One long-lived `JudgeActor` (``rayjudge.py``) per node that offers the custom resource
``guardrail_engine``, pinned to it, each a `DockerSandbox` on that node's own engine. A batch is
cut into chunks (a few jobs each, every chunk under the runner's frame limit) that go to the
least-loaded actor; verdicts come back in the order given. Jobs and verdicts cross the cluster as
JSON strings, never as pickled objects, and the trusted judging stays inside each node's actor.

Faults are never verdicts:

* every chunk has a deadline, counted from when its actor starts on it (``deadline_s``; default:
  the worst case of every job timing out); a chunk past it moves to another actor, the late
  answer is dropped, and the late actor gets no work until it answers a probe again;
* a chunk whose actor died (the process killed, its node gone) is replayed job by job, each job
  alone on an actor (Ray restarts a dead actor on its node, and its identity is checked again
  before it gets work); a job that kills `BLAME_AFTER` actors while running alone is blamed
  with ``sandbox_fault``, as `DockerSandbox` blames a job that kills its containers;
* a node that cannot judge at all (its engine down) gets no more work; when no node can, `run`
  raises `SandboxError`.

Every actor must report the same `identity` (image id, runtime, runner, limits): nodes that
disagree are refused, by name. Ray runs whatever a client pickles, so a cluster without token
authentication (``RAY_AUTH_MODE=token``) is refused before connecting.
"""

from __future__ import annotations

import atexit
import contextlib
import math
import os
import signal
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from guardrail.errors import SandboxError
from guardrail.sandbox.base import Job, Sandbox
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.limits import SandboxLimits
from guardrail.sandbox.rayjudge import JudgeActor, JudgeSettings, job_to_text, verdicts_from_text
from guardrail.sandbox.replay import BLAME_AFTER
from guardrail.sandbox.runner import framing
from guardrail.verdict import Reason, Status, Verdict

__all__ = ["ENGINE_RESOURCE", "RaySandbox", "require_token_auth"]

ENGINE_RESOURCE = "guardrail_engine"
_CHUNK_BYTES = framing.MAX_FRAME // 4
_MAX_CHUNK_JOBS = 64
_QUEUED_PER_ACTOR = 2  # chunks sent to one actor at once: the next is there when one ends
_PROBE_S = 60.0  # how long a probe of a (re)started actor may take before it is asked again


def require_token_auth() -> None:
    """Raise `SandboxError` unless Ray's token authentication is on in this process."""
    if os.environ.get("RAY_AUTH_MODE", "").strip().lower() != "token":
        raise SandboxError(
            "refusing to use Ray without token authentication (RAY_AUTH_MODE is"
            f" {os.environ.get('RAY_AUTH_MODE', 'unset')!r}): anyone who reaches a Ray port"
            " can run code on every node",
            hint="start every node and this process with RAY_AUTH_MODE=token and the cluster's"
            " token in RAY_AUTH_TOKEN or RAY_AUTH_TOKEN_PATH (docs/ray.md)",
        )


@contextlib.contextmanager
def _own_sigterm() -> Iterator[None]:
    """Keep this process's SIGTERM handling: ``ray.init`` replaces it with ``sys.exit(15)``, so a
    service stopped by SIGTERM would exit 15 rather than die of the signal as it does on Docker
    (and as supervisors expect)."""
    if threading.current_thread() is not threading.main_thread():
        yield  # Ray sets no handler off the main thread
        return
    kept = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if kept is not None:  # None: a handler set outside Python, which Python cannot restore
            signal.signal(signal.SIGTERM, kept)


@dataclass
class _Chunk:
    indices: list[int]
    solo: bool = False  # one job alone, after a chunk died with it
    kills: int = 0  # actors that died running it alone
    moves: int = 0  # deadlines it missed


@dataclass
class _Sent:
    chunk: _Chunk
    slot: _Slot
    ref: Any
    deadline: float = math.inf  # set when the actor starts on it (it heads the actor's queue)


@dataclass
class _Slot:
    """One node's actor and what is queued on it."""

    node: str  # "ip (node id prefix)"
    actor: Any
    pool_size: int = 1
    queue: list[_Sent] = field(default_factory=list)
    usable: bool = False  # answered a probe with the cluster's identity
    probe: Any = None  # an outstanding describe() call
    probe_deadline: float = 0.0
    problem: str = ""
    facts: dict[str, Any] = field(default_factory=dict)

    def load(self) -> int:
        return sum(len(sent.chunk.indices) for sent in self.queue)


class RaySandbox(Sandbox):
    """Judges candidates on every node of a Ray cluster that offers ``guardrail_engine``.

    Args:
        address: the cluster (``host:port`` of its head, ``ray://host:port`` for Ray Client,
            ``auto``); default ``$GUARDRAIL_RAY_ADDRESS``, else ``auto``. Not used when Ray is
            already initialised in this process.
        node_ip: this machine's address as the cluster knows it (``$GUARDRAIL_RAY_NODE_IP``),
            needed when it is a node started with ``--node-ip-address``.
        image, pool_size, runtime, jobs_per_container, limits, timeout_s: as for
            `DockerSandbox`, for every node's pool (``pool_size`` per node; default the
            node's CPU count).
        deadline_s: seconds a chunk may take on an actor before it moves to another one.
        chunk_jobs: jobs per chunk (default: the batch spread over the nodes, at most 64).
    """

    close_timeout_s = 60.0

    def __init__(
        self,
        address: str | None = None,
        *,
        node_ip: str | None = None,
        image: str | None = None,
        pool_size: int | None = None,
        runtime: str | None = None,
        jobs_per_container: int = 500,
        limits: SandboxLimits | None = None,
        timeout_s: float | None = None,
        deadline_s: float | None = None,
        chunk_jobs: int | None = None,
    ) -> None:
        require_token_auth()
        # The local sandbox checks the settings exactly as it does everywhere (and the
        # environment's GUARDRAIL_* defaults); it never starts a container here.
        local = DockerSandbox(
            image, pool_size=pool_size, runtime=runtime, limits=limits, timeout_s=timeout_s
        )
        local.close()
        self.limits = local.limits
        self.deadline_s = deadline_s
        self.chunk_jobs = chunk_jobs
        # Unset (no argument, no $GUARDRAIL_POOL_SIZE here): each node's own CPU count.
        chosen = pool_size is not None or bool(os.environ.get("GUARDRAIL_POOL_SIZE"))
        self._settings = JudgeSettings.of(
            image=local.image,
            pool_size=local.pool_size if chosen else None,
            runtime=local.runtime,
            jobs_per_container=jobs_per_container,
            limits=self.limits,
        )
        import ray

        self._ray = ray
        self._owns_ray = not ray.is_initialized()
        if self._owns_ray:
            target = address or os.environ.get("GUARDRAIL_RAY_ADDRESS") or "auto"
            node_ip = node_ip or os.environ.get("GUARDRAIL_RAY_NODE_IP") or None
            try:
                with _own_sigterm():
                    ray.init(
                        address=target,
                        _node_ip_address=node_ip,
                        log_to_driver=False,
                        configure_logging=False,
                    )
            except Exception as exc:
                raise SandboxError(
                    f"cannot connect to the Ray cluster at {target}: {exc}"
                ) from None
        self._lock = threading.Lock()
        self._closed = False
        self._slots: list[_Slot] = []
        atexit.register(self.close)
        try:
            self._place()
            self._identity = self._agree()
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------ placement and identity

    def _place(self) -> None:
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        ray = self._ray
        nodes = [n for n in ray.nodes() if n.get("Alive") and n["Resources"].get(ENGINE_RESOURCE)]
        if not nodes:
            raise SandboxError(
                f"no node of the Ray cluster offers the resource {ENGINE_RESOURCE!r}",
                hint=f"start each node with --resources='{{\"{ENGINE_RESOURCE}\": 1}}'",
            )
        remote = ray.remote(JudgeActor)
        for node in nodes:
            actor = remote.options(
                num_cpus=0,
                resources={ENGINE_RESOURCE: 1},
                scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False),
                max_restarts=-1,  # a killed judge comes back on its node; faults are replayed
                max_task_retries=0,  # ... but a call it died in is ours to replay, not Ray's
            ).remote(dict(self._settings))
            name = f"{node['NodeManagerAddress']} ({node['NodeID'][:8]})"
            self._slots.append(_Slot(node=name, actor=actor))

    def _agree(self) -> str:
        """Probe every actor; the one identity they all report, or `SandboxError` naming them."""
        ray = self._ray
        refs = [slot.actor.describe.remote() for slot in self._slots]
        try:
            facts = ray.get(refs, timeout=_PROBE_S)
        except Exception as exc:
            raise SandboxError(f"the judge actors did not start: {exc}") from None
        broken = []
        for slot, fact in zip(self._slots, facts, strict=True):
            slot.facts, slot.pool_size = fact, int(fact["pool_size"])
            if fact["problem"]:
                broken.append(f"{slot.node}: {fact['problem']}")
        if broken:
            raise SandboxError("nodes cannot judge: " + "; ".join(broken))
        identities = {fact["identity"] for fact in facts}
        if len(identities) != 1:
            listing = "; ".join(
                f"{slot.node} ({fact['docker_host']}): {fact['identity']}"
                for slot, fact in zip(self._slots, facts, strict=True)
            )
            raise SandboxError(
                f"the nodes judge under {len(identities)} different identities: {listing}",
                hint="every node needs the same image id: build it once and copy it with"
                " `guardrail sandbox export` / `guardrail sandbox import`",
            )
        for slot in self._slots:
            slot.usable = True
        return str(identities.pop())

    @property
    def identity(self) -> str:
        return str(self._identity)

    @property
    def pool_size(self) -> int:
        """Containers run in parallel over the nodes that get work now."""
        return sum(slot.pool_size for slot in self._slots if slot.usable) or 1

    def nodes(self) -> list[dict[str, Any]]:
        """Each node's placement and pool figures (for ``doctor`` and ``health``)."""
        ray = self._ray
        report = []
        for slot in self._slots:
            entry = {"node": slot.node, "usable": slot.usable, "problem": slot.problem}
            entry |= {k: slot.facts.get(k) for k in ("host", "pid", "docker_host", "image")}
            try:
                entry |= ray.get(slot.actor.stats.remote(), timeout=10)
            except Exception as exc:  # reported, not raised: a doctor shows it
                entry["problem"] = entry["problem"] or f"{type(exc).__name__}: {exc}"
            entry["queued_jobs"] = slot.load()
            report.append(entry)
        return report

    def check_nodes(self) -> list[tuple[str, str]]:
        """Each node's doctor report (JSON of `guardrail.sandbox.doctor.DoctorReport`)."""
        reports = self._ray.get([slot.actor.check.remote() for slot in self._slots])
        return [(slot.node, str(report)) for slot, report in zip(self._slots, reports, strict=True)]

    def warm_up(self) -> None:
        """Start every node's pool now rather than on the first jobs."""
        self._ray.get([slot.actor.warm_up.remote() for slot in self._slots])

    # ------------------------------------------------------------ running jobs

    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        if not jobs:
            return []
        if self._closed:
            raise SandboxError("this RaySandbox is closed")
        texts = [job_to_text(job) for job in jobs]
        pending = self._chunks(texts)
        verdicts: dict[int, Verdict] = {}
        mine: dict[Any, _Sent] = {}
        while pending or mine:
            with self._lock:
                self._check_probes()
                while pending and (slot := self._least_loaded()) is not None:
                    self._send(pending.pop(0), slot, texts, mine)
                if not mine:
                    raise SandboxError(self._no_node_message())
                wait_s = max(0.01, min(sent.deadline for sent in mine.values()) - time.monotonic())
            ready, _ = self._ray.wait(list(mine), num_returns=1, timeout=min(wait_s, 1.0))
            with self._lock:
                for ref in ready:
                    sent = mine.pop(ref)
                    self._finish(sent)
                    pending[:0] = self._collect(sent, verdicts)
                now = time.monotonic()
                for ref, sent in list(mine.items()):
                    if sent.deadline <= now:
                        del mine[ref]
                        pending[:0] = self._expire(sent, mine)
        return [verdicts[index] for index in range(len(jobs))]

    def _chunks(self, texts: list[str]) -> list[_Chunk]:
        usable = max(1, sum(slot.usable for slot in self._slots))
        most = self.chunk_jobs or min(_MAX_CHUNK_JOBS, math.ceil(len(texts) / usable))
        chunks: list[_Chunk] = []
        current: list[int] = []
        size = 0
        for index, text in enumerate(texts):
            if current and (len(current) >= most or size + len(text) > _CHUNK_BYTES):
                chunks.append(_Chunk(current))
                current, size = [], 0
            current.append(index)
            size += len(text)
        chunks.append(_Chunk(current))
        return chunks

    def _least_loaded(self) -> _Slot | None:
        open_slots = [
            slot for slot in self._slots if slot.usable and len(slot.queue) < _QUEUED_PER_ACTOR
        ]
        return min(open_slots, key=_Slot.load, default=None)

    def _send(self, chunk: _Chunk, slot: _Slot, texts: list[str], mine: dict[Any, _Sent]) -> None:
        ref = slot.actor.run.remote([texts[index] for index in chunk.indices])
        sent = _Sent(chunk, slot, ref)
        slot.queue.append(sent)
        if len(slot.queue) == 1:
            sent.deadline = time.monotonic() + self._deadline(len(chunk.indices), slot)
        mine[ref] = sent

    def _deadline(self, jobs: int, slot: _Slot) -> float:
        if self.deadline_s is not None:
            return self.deadline_s
        # Every job timing out, plus the host's grace per round of the node's pool, plus a
        # container start or two.
        rounds = math.ceil(jobs / max(1, slot.pool_size))
        return rounds * (self.limits.timeout_s + DockerSandbox.grace_s) + 2 * 30.0

    def _finish(self, sent: _Sent) -> None:
        """``sent`` left its actor's queue; the next one there starts its clock."""
        queue = sent.slot.queue
        if sent in queue:
            queue.remove(sent)
        if queue and queue[0].deadline == math.inf:
            queue[0].deadline = time.monotonic() + self._deadline(
                len(queue[0].chunk.indices), sent.slot
            )

    def _collect(self, sent: _Sent, verdicts: dict[int, Verdict]) -> list[_Chunk]:
        """Take a finished call's verdicts; the chunks to run again after a fault."""
        ray = self._ray
        chunk, slot = sent.chunk, sent.slot
        try:
            got = verdicts_from_text(ray.get(sent.ref))
        except ray.exceptions.RayTaskError as exc:  # the node's sandbox raised: it cannot judge
            self._quarantine(slot, f"{type(exc.cause).__name__}: {exc.cause}")
            return self._moved(chunk, slot)
        except ray.exceptions.RayError as exc:  # the actor (or its node) died under it
            self._quarantine(slot, f"the judge actor died: {type(exc).__name__}")
            return self._after_kill(chunk, slot, verdicts)
        if len(got) != len(chunk.indices):
            self._quarantine(slot, f"answered {len(got)} verdicts for {len(chunk.indices)} jobs")
            return self._moved(chunk, slot)
        verdicts.update(zip(chunk.indices, got, strict=True))
        return []

    def _after_kill(self, chunk: _Chunk, slot: _Slot, verdicts: dict[int, Verdict]) -> list[_Chunk]:
        if not chunk.solo:  # which job killed it is unknown: each runs alone from now on
            return [_Chunk([index], solo=True) for index in chunk.indices]
        chunk.kills += 1
        if chunk.kills < BLAME_AFTER:
            return [chunk]
        verdicts[chunk.indices[0]] = Verdict.unjudged(
            Status.ERROR,
            Reason.SANDBOX_FAULT,
            f"this candidate killed {BLAME_AFTER} judge actors in a row, each running it alone"
            f" (the last on {slot.node})",
        )
        return []

    def _expire(self, sent: _Sent, mine: dict[Any, _Sent]) -> list[_Chunk]:
        """``sent`` is past its deadline: it and what waits behind it on that actor move."""
        slot = sent.slot
        moved = [sent, *(other for other in slot.queue if other is not sent and other.ref in mine)]
        for other in moved[1:]:
            del mine[other.ref]
        for other in moved:
            if other in slot.queue:
                slot.queue.remove(other)  # its answer, if it ever comes, is dropped
        self._quarantine(slot, f"a batch of {len(sent.chunk.indices)} jobs passed its deadline")
        return [chunk for other in moved for chunk in self._moved(other.chunk, slot)]

    def _moved(self, chunk: _Chunk, slot: _Slot) -> list[_Chunk]:
        """``chunk`` goes to another actor, unless it has failed on every node in turn already."""
        chunk.moves += 1
        if chunk.moves > 2 * len(self._slots):
            raise SandboxError(
                f"a batch of {len(chunk.indices)} jobs failed on the nodes {chunk.moves} times"
                f" in a row; the last: {slot.node}: {slot.problem}"
            )
        return [chunk]

    def _quarantine(self, slot: _Slot, why: str) -> None:
        """No more work for ``slot`` until it answers a probe with the cluster's identity."""
        slot.usable = False
        slot.problem = why
        if slot.probe is None:
            slot.probe = slot.actor.describe.remote()
            slot.probe_deadline = time.monotonic() + _PROBE_S

    def _check_probes(self) -> None:
        ray = self._ray
        for slot in self._slots:
            if slot.probe is None:
                continue
            ready, _ = ray.wait([slot.probe], timeout=0)
            if not ready:
                if time.monotonic() > slot.probe_deadline:  # ask again (a restarted actor)
                    slot.probe = None
                    self._quarantine(slot, slot.problem)
                continue
            probe, slot.probe = slot.probe, None
            try:
                facts = ray.get(probe)
            except ray.exceptions.RayError as exc:
                self._quarantine(slot, f"probe failed: {type(exc).__name__}")
                continue
            if facts["identity"] == self._identity and not facts["problem"]:
                slot.facts, slot.usable, slot.problem = facts, True, ""
            else:
                slot.problem = facts["problem"] or f"now judges under {facts['identity']}"
                self._quarantine(slot, slot.problem)

    def _no_node_message(self) -> str:
        listing = "; ".join(f"{slot.node}: {slot.problem or 'busy'}" for slot in self._slots)
        return f"no node of the Ray cluster can judge now ({listing})"

    # ------------------------------------------------------------ closing

    def shutdown(self) -> int:
        """`close`, and return how many containers the nodes removed (for the service's log)."""
        with self._lock:
            if self._closed:
                return 0
            self._closed = True
        ray = self._ray
        refs = [slot.actor.close.remote() for slot in self._slots]
        removed = 0
        if refs:
            done, _ = ray.wait(refs, num_returns=len(refs), timeout=self.close_timeout_s)
            for ref in done:
                with contextlib.suppress(ray.exceptions.RayError):  # a dead node's actor
                    removed += int(ray.get(ref))
        for slot in self._slots:
            ray.kill(slot.actor, no_restart=True)
        if self._owns_ray:
            ray.shutdown()
        atexit.unregister(self.close)
        return removed

    def close(self) -> None:
        """Remove every node's containers and end the actors (and Ray, if this started it)."""
        self.shutdown()
