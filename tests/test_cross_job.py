"""Jobs in one container cannot reach each other: every verdict is the one the job gets alone.

Each pair in snippets/cross_job/ (and the memory thief of snippets/hostile/) runs one after the
other in ONE container: the first leaves something behind (its code in freed memory, a POSIX or
System V queue, a file, a full queue namespace), the second tries to use it. A cross-job verdict
would then be cached forever, so each must equal the verdict of the same job run alone in a
fresh container. Under each runtime (runc, and gVisor's runsc, where only the runner's seccomp
filter closes the queues).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec
from guardrail.verdict import Status, Verdict

pytestmark = pytest.mark.docker

SNIPPETS = Path(__file__).parent / "snippets"
SPEC = Spec.from_tests(
    ["assert square(3) == 9", "assert square(7919) == 62710561", "assert square(-2) == 4"]
)
# class of attack: (the job that runs first, the job that runs after it)
PAIRS = {
    "memory residue": ("cross_job/neighbour_code_victim", "hostile/hunt_neighbours_code_in_memory"),
    "POSIX queue publish/read": ("cross_job/mqueue_publisher", "cross_job/mqueue_reader"),
    "POSIX queue names": ("cross_job/mqueue_name_publisher", "cross_job/mqueue_name_reader"),
    "POSIX queue exhaustion": ("cross_job/mqueue_filler", "cross_job/mqueue_user"),
    "files in /tmp": ("cross_job/tmp_file_publisher", "cross_job/tmp_file_reader"),
    "System V queue publish/read": ("cross_job/sysv_publisher", "cross_job/sysv_reader"),
}
ORDER = [name for pair in PAIRS.values() for name in pair]


def _job(name: str) -> Job:
    return Job((SNIPPETS / f"{name}.py").read_text(), SPEC)


def _summary(verdict: Verdict) -> tuple[str, str, list[str]]:
    return verdict.status.value, verdict.reason.value, verdict.outcomes


@pytest.fixture(scope="module")
def together_and_alone(sandbox_runtime: str) -> tuple[dict[str, Verdict], dict[str, Verdict]]:
    with DockerSandbox(pool_size=1, timeout_s=5.0, runtime=sandbox_runtime) as sandbox:
        together = sandbox.run([_job(name) for name in ORDER])
        assert sandbox.stats.containers_started == 1
        assert sandbox.stats.faults == 0
    # jobs_per_container=1: every job in a container of its own, started for it.
    with DockerSandbox(
        pool_size=2, timeout_s=5.0, jobs_per_container=1, runtime=sandbox_runtime
    ) as sandbox:
        alone = sandbox.run([_job(name) for name in ORDER])
        assert sandbox.stats.containers_started == len(ORDER)
    return dict(zip(ORDER, together, strict=True)), dict(zip(ORDER, alone, strict=True))


@pytest.mark.parametrize("attack", list(PAIRS))
def test_each_job_gets_the_verdict_it_gets_alone(
    together_and_alone: tuple[dict[str, Verdict], dict[str, Verdict]], attack: str
) -> None:
    together, alone = together_and_alone
    for name in PAIRS[attack]:
        assert _summary(together[name]) == _summary(alone[name]), (name, together[name])


def test_the_victims_are_honest_and_the_thieves_would_need_their_neighbour(
    together_and_alone: tuple[dict[str, Verdict], dict[str, Verdict]],
) -> None:
    """Guards the pairs themselves: publishers are correct code, readers fail on their own."""
    _, alone = together_and_alone
    for first, second in PAIRS.values():
        if "filler" in first:
            continue
        assert alone[first].status is Status.VERIFIED, (first, alone[first])
        assert alone[second].status is Status.FAILED, (second, alone[second])
