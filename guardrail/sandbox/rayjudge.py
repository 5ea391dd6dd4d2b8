"""The judge that runs on each node of a Ray cluster: a `DockerSandbox` on that node's engine.

`RaySandbox` (``raysandbox.py``) places one `JudgeActor` per node offering the custom resource
``guardrail_engine``. The actor owns that node's warm pool, so the trusted judge (the in-container
supervisor and its judge process, started by `DockerSandbox`) and every expected value stay on
the node; nothing but jobs and verdicts crosses the cluster, and both cross as JSON *strings*:
Ray pickles what a caller sends, and a string unpickles to a string, never to code of the
sender's choosing (`job_to_text` / `job_from_text`, `verdicts_to_text`).

The engine is the node's own: ``DOCKER_HOST`` in the environment the node's ``ray start`` was
given (workers inherit it), else Docker's default socket. This module imports nothing from Ray,
so a test can drive `JudgeActor` in-process.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
from collections.abc import Sequence
from dataclasses import asdict
from typing import Any

from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.leftovers import remove_dead
from guardrail.sandbox.limits import SandboxLimits
from guardrail.spec import Spec
from guardrail.verdict import Verdict

__all__ = [
    "JudgeActor",
    "JudgeSettings",
    "job_from_text",
    "job_to_text",
    "verdicts_from_text",
    "verdicts_to_text",
]


def job_to_text(job: Job) -> str:
    """A job as one JSON string (code, spec, context and binding are all plain data)."""
    return json.dumps(
        {
            "code": job.code,
            "spec": job.spec.model_dump(mode="json"),
            "context": job.context,
            "bind": job.bind,
        },
        separators=(",", ":"),
    )


def job_from_text(text: str) -> Job:
    data = json.loads(text)
    return Job(
        code=str(data["code"]),
        spec=Spec.model_validate(data["spec"]),
        context=data["context"],
        bind=data["bind"],
    )


def verdicts_to_text(verdicts: Sequence[Verdict]) -> str:
    return "[" + ",".join(verdict.model_dump_json() for verdict in verdicts) + "]"


def verdicts_from_text(text: str) -> list[Verdict]:
    return [Verdict.model_validate(item) for item in json.loads(text)]


class JudgeSettings(dict[str, Any]):
    """What every node's sandbox is built with (plain data: it crosses to the actors).

    Keys: ``image``, ``pool_size`` (``None``: the node's CPU count), ``runtime``,
    ``jobs_per_container`` and ``limits`` (the fields of `SandboxLimits`).
    """

    @classmethod
    def of(
        cls,
        *,
        image: str | None,
        pool_size: int | None,
        runtime: str | None,
        jobs_per_container: int,
        limits: SandboxLimits,
    ) -> JudgeSettings:
        return cls(
            image=image,
            pool_size=pool_size,
            runtime=runtime,
            jobs_per_container=jobs_per_container,
            limits=asdict(limits),
        )


class JudgeActor:
    """One node's judge: builds a `DockerSandbox` on the node's engine and runs jobs on it.

    Every method takes and returns plain data. `describe` never raises: a node whose engine or
    image cannot be used says so in ``problem``, so the caller can name it.
    """

    def __init__(self, settings: dict[str, Any]) -> None:
        self.docker_host = os.environ.get("DOCKER_HOST", "")
        self.sandbox = DockerSandbox(
            settings.get("image"),
            client=_client(self.docker_host) if self.docker_host else None,
            pool_size=settings["pool_size"],
            runtime=settings.get("runtime"),
            jobs_per_container=int(settings["jobs_per_container"]),
            limits=SandboxLimits(**settings["limits"]),
        )

    def describe(self) -> dict[str, Any]:
        """Where this judge runs and what it judges under (``identity``), or its ``problem``."""
        facts: dict[str, Any] = {
            "host": socket.gethostname(),
            "pid": os.getpid(),
            "docker_host": self.docker_host or "(default)",
            "image": self.sandbox.image,
            "pool_size": self.sandbox.pool_size,
            "identity": "",
            "problem": "",
        }
        try:
            facts["identity"] = self.sandbox.identity
        except Exception as exc:  # reported to the caller, who names the node
            facts["problem"] = f"{type(exc).__name__}: {exc}"
        return facts

    def warm_up(self) -> None:
        self.sandbox.warm_up()

    def run(self, jobs: list[str]) -> str:
        """Judge JSON-encoded jobs (`job_to_text`); their verdicts as one JSON string."""
        return verdicts_to_text(self.sandbox.run([job_from_text(text) for text in jobs]))

    def check(self) -> str:
        """The doctor's report (`guardrail.sandbox.doctor.check_sandbox`) for this node, as JSON.

        Runs on a one-container sandbox of its own beside the pool, as the doctor requires.
        """
        from guardrail.sandbox.doctor import check_sandbox

        sandbox = self.sandbox
        with DockerSandbox(
            sandbox.image,
            client=_client(self.docker_host) if self.docker_host else None,
            pool_size=1,
            runtime=sandbox.runtime,
            limits=sandbox.limits,
        ) as alone:
            return check_sandbox(alone).model_dump_json()

    def stats(self) -> dict[str, Any]:
        """The pool's counters (for ``doctor`` and ``health``)."""
        stats = self.sandbox.stats
        return {
            "containers_started": stats.containers_started,
            "containers_recycled": stats.containers_recycled,
            "jobs_run": stats.jobs_run,
            "faults": stats.faults,
            "pool_size": self.sandbox.pool_size,
        }

    def close(self) -> int:
        """Remove this judge's containers, and those of dead judges before it on this engine: a
        killed actor leaves its containers exited, and its pid on this host is gone, which
        `remove_dead` takes as proof. Returns how many were removed."""
        removed = self.sandbox.shutdown()
        # An engine that is down keeps them; the next sweep on it removes them.
        with contextlib.suppress(Exception):
            removed += len(remove_dead(self.sandbox.client))
        return removed


def _client(url: str) -> Any:
    import docker

    return docker.DockerClient(base_url=url)
