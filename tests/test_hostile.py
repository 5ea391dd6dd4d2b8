"""Hostile candidates are never verified and leave the pool healthy for the next candidate.

Each file in snippets/hostile/ returns the right answer only if its attack worked, so a verdict
of ``verified`` would mean the sandbox was beaten. All of them run in ONE batch on ONE container,
each followed by a normal candidate (must verify) and a probe for leftovers (must find none).
Every sandbox test here runs under each container runtime (runc, and gVisor's runsc).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict

pytestmark = pytest.mark.docker

SNIPPETS = Path(__file__).parent / "snippets"
HOSTILE = sorted((SNIPPETS / "hostile").glob("*.py"))
SPEC = Spec.from_tests(
    ["assert square(3) == 9", "assert square(7919) == 62710561", "assert square(-2) == 4"]
)
# The normal candidate run after each attack is long (over 512 bytes) and carries a marker, so the
# next attack could find it in memory if any process that forks candidates had ever held it.
GOOD = (SNIPPETS / "cross_job" / "neighbour_code_victim.py").read_text()
PROBE = Job(
    (SNIPPETS / "probes" / "no_strangers.py").read_text(),
    Spec.from_tests(
        [
            "assert leftovers() == {'processes': 0, 'files': [], 'ipc': 0, 'mqueues': [],"
            " 'abstract_sockets': []}"
        ]
    ),
)

# The verdict each attack must get: never verified, and each failure mode its own explicit status.
EXPECTED = {
    "always_equal": (Status.UNVERIFIABLE, Reason.UNSERIALISABLE),
    "always_equal_int_subclass": (Status.UNVERIFIABLE, Reason.UNSERIALISABLE),
    "always_equal_inside_a_generator": (Status.UNVERIFIABLE, Reason.UNSERIALISABLE),
    "fork_bomb": (Status.TIMEOUT, Reason.TIMEOUT),
    "infinite_loop": (Status.TIMEOUT, Reason.TIMEOUT),
    "memory_bomb": (Status.FAILED, Reason.TESTS_FAILED),
    "os_exit_at_import": (Status.ERROR, Reason.CANDIDATE_EXITED),
    "os_exit_in_function": (Status.ERROR, Reason.CANDIDATE_EXITED),
    "sys_exit_at_import": (Status.ERROR, Reason.LOAD_ERROR),
    "sys_exit_in_function": (Status.FAILED, Reason.TESTS_FAILED),
    "raise_system_exit": (Status.FAILED, Reason.TESTS_FAILED),
    "print_result_marker": (Status.ERROR, Reason.PROTOCOL_VIOLATION),
    # Its answer to the judge's first request (the bound name's stand-in) is not one.
    "forged_greeting": (Status.ERROR, Reason.PROTOCOL_VIOLATION),
    "forged_greeting_crashes_the_judge": (Status.FAILED, Reason.TESTS_FAILED),
    "forged_callbacks_and_references": (Status.ERROR, Reason.PROTOCOL_VIOLATION),
    "forged_argument_parts": (Status.ERROR, Reason.PROTOCOL_VIOLATION),
    "forged_attributes_of_test_functions": (Status.ERROR, Reason.PROTOCOL_VIOLATION),
    "undeletable_leftovers": (Status.FAILED, Reason.TESTS_FAILED),
    "sysv_ipc_leftovers": (Status.FAILED, Reason.TESTS_FAILED),
    "posix_mqueue_leftovers": (Status.FAILED, Reason.TESTS_FAILED),
    "abstract_socket_daemon": (Status.FAILED, Reason.TESTS_FAILED),
    "deep_directory_leftover": (Status.FAILED, Reason.TESTS_FAILED),
    "wide_directory_leftover": (Status.FAILED, Reason.TESTS_FAILED),
    # Exceptions named like the judge's faults are the candidate's own failures, nothing else.
    "raise_named_unserialisable": (Status.FAILED, Reason.TESTS_FAILED),
    "raise_named_candidate_exited": (Status.FAILED, Reason.TESTS_FAILED),
    "raise_named_protocol_violation": (Status.FAILED, Reason.TESTS_FAILED),
    "raise_named_timeout": (Status.FAILED, Reason.TESTS_FAILED),
    "raise_named_fault": (Status.FAILED, Reason.TESTS_FAILED),
    "raise_hostile_exception_name": (Status.FAILED, Reason.TESTS_FAILED),
}
# Attacks the runner does not yet stop under a runtime, and why. Each runs alone on a container
# of its own (so the shared batch keeps proving the rest) as a strict xfail: when the runner
# closes the gap the test passes, fails for it, and the entry must go.
KNOWN_GAPS: dict[str, dict[str, str]] = {"runc": {}, "runsc": {}}

# Attacks whose set-up can outlast the 2 s limit on a loaded machine (allocating 512 MB three
# times; creating 3,000 files, or a 3,000-level tree, through gVisor's gofer: the first job of a
# fresh runsc container used 1.7-1.8 s of CPU on it, on 9234d6c as on later commits): a timeout
# is as good a verdict for them, and the probe after each still proves nothing was left behind.
SLOW_UNDER_LOAD = {"memory_bomb", "wide_directory_leftover", "deep_directory_leftover"}


def _run(runtime: str, paths: list[Path]) -> dict[str, tuple[Verdict, Verdict, Verdict]]:
    """Every attack in ``paths``, each followed by a normal candidate and a leftover probe."""
    with DockerSandbox(pool_size=1, timeout_s=2.0, runtime=runtime) as sandbox:
        sandbox.check_ready()
        jobs = []
        for path in paths:
            jobs += [Job(path.read_text(), SPEC), Job(GOOD, SPEC), PROBE]
        verdicts = sandbox.run(jobs)
        assert sandbox.stats.containers_started == 1, "the pool must survive every attack"
        assert sandbox.stats.faults == 0, "cleanup after every attack must keep the container"
    return {
        path.stem: (verdicts[3 * i], verdicts[3 * i + 1], verdicts[3 * i + 2])
        for i, path in enumerate(paths)
    }


@pytest.fixture(scope="module")
def hostile_run(sandbox_runtime: str) -> dict[str, tuple[Verdict, Verdict, Verdict]]:
    gaps = KNOWN_GAPS.get(sandbox_runtime, {})
    return _run(sandbox_runtime, [path for path in HOSTILE if path.stem not in gaps])


def test_the_hostile_suite_covers_every_attack_of_the_issue() -> None:
    names = {path.stem for path in HOSTILE}
    assert len(names) >= 25
    assert set(EXPECTED) <= names


@pytest.mark.parametrize("name", [path.stem for path in HOSTILE])
def test_hostile_candidate_is_never_verified_and_the_pool_stays_healthy(
    hostile_run: dict[str, tuple[Verdict, Verdict, Verdict]],
    sandbox_runtime: str,
    name: str,
    request: pytest.FixtureRequest,
) -> None:
    gap = KNOWN_GAPS.get(sandbox_runtime, {}).get(name)
    if gap:
        request.applymarker(pytest.mark.xfail(strict=True, reason=gap))
        attack, after, probe = _run(sandbox_runtime, [SNIPPETS / "hostile" / f"{name}.py"])[name]
    else:
        attack, after, probe = hostile_run[name]
    assert attack.status is not Status.VERIFIED, attack
    if name in EXPECTED:
        got = (attack.status, attack.reason)
        if not (name in SLOW_UNDER_LOAD and got == (Status.TIMEOUT, Reason.TIMEOUT)):
            assert got == EXPECTED[name], attack
    assert after.status is Status.VERIFIED, f"a normal candidate after {name}: {after}"
    assert probe.status is Status.VERIFIED, f"leftovers after {name}: {probe.tests}"


def test_host_environment_is_invisible(
    hostile_run: dict[str, tuple[Verdict, Verdict, Verdict]],
) -> None:
    """gVisor lets every uid read /proc/<pid>/environ: PID 1's is empty (the bootstrap re-execs
    with none), so the candidate sees only the four variables the runner gives it."""
    attack, _, _ = hostile_run["read_host_environment"]
    # The candidate printed every variable it could see: only the runner's four.
    assert "('PATH', " in attack.stdout
    for variable in ("HOSTNAME", "GUARDRAIL", "DOCKER", "USER", "SHELL"):
        assert variable not in attack.stdout


def test_ipc_attacks_fail_at_their_first_call(
    hostile_run: dict[str, tuple[Verdict, Verdict, Verdict]],
) -> None:
    """The runner's seccomp filter refuses them (its errnos) before anything is made, under gVisor
    (where nothing could be swept) as under runc."""
    sysv, _, _ = hostile_run["sysv_ipc_leftovers"]
    calls = ("shmget", "semget", "msgget")
    assert sysv.stdout.splitlines() == [f"{call} -1 3001" for call in calls]
    queues, _, _ = hostile_run["posix_mqueue_leftovers"]
    assert queues.stdout.splitlines() == ["mq_open 0 3002"]


def test_candidate_exception_names_are_words_not_faults(
    hostile_run: dict[str, tuple[Verdict, Verdict, Verdict]],
) -> None:
    attack, _, _ = hostile_run["raise_named_unserialisable"]
    assert attack.outcomes == ["ERROR:Unserialisable"] * 3
    assert all(test.fault is None for test in attack.tests)
    forged, _, _ = hostile_run["raise_hostile_exception_name"]
    (outcome,) = set(forged.outcomes)
    assert outcome.startswith("ERROR:_")
    assert outcome[len("ERROR:") :].isidentifier()
    assert len(outcome) <= len("ERROR:") + 100


def test_judge_faults_are_flagged_structurally(
    hostile_run: dict[str, tuple[Verdict, Verdict, Verdict]],
) -> None:
    for name, fault in (
        ("always_equal", Reason.UNSERIALISABLE),
        ("infinite_loop", Reason.TIMEOUT),
        ("os_exit_in_function", Reason.CANDIDATE_EXITED),
    ):
        attack, _, _ = hostile_run[name]
        assert fault in {test.fault for test in attack.tests}, (name, attack.tests)


def test_a_forged_alias_is_not_reported(
    hostile_run: dict[str, tuple[Verdict, Verdict, Verdict]],
) -> None:
    attack, _, _ = hostile_run["forged_greeting"]
    assert attack.alias is None  # the greeting's alias was not a name the candidate offered


def test_output_is_captured_and_truncated(sandbox_runtime: str) -> None:
    noisy = "def square(x):\n    print('x' * 100000)\n    return x * x\n"
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        (verdict,) = sandbox.run([Job(noisy, SPEC)])
    assert verdict.status is Status.VERIFIED
    assert verdict.stdout.endswith("[... output truncated]")
    assert len(verdict.stdout) < 5000


def test_hunters_would_find_a_leak_if_there_were_one() -> None:
    """Control for the hunting attacks: in a process that holds the tests they do succeed.

    A fresh interpreter, not this one: pytest's process holds whatever earlier tests left (a
    judge's proxy objects refuse ``repr``, as they should), which is not what a hunter meets.
    """
    hunter = (SNIPPETS / "hostile" / "hunt_tests_in_own_memory.py").read_text()
    leaked_test = " ".join(SPEC.tests)  # the tests are in the hunting process's memory
    program = f"tests = {leaked_test!r}\n{hunter}\nprint(square(7919))\n"
    ran = subprocess.run(
        [sys.executable, "-I", "-c", program],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert ran.returncode == 0, ran.stderr[-2000:]
    assert ran.stdout.split() == ["62710561"], ran.stdout[-2000:]


def test_an_unresponsive_container_is_replaced_and_its_jobs_replayed(sandbox_runtime: str) -> None:
    """An unresponsive container is killed by id; its jobs run again on a fresh one, and the
    job that was waiting when it froze gets its own verdict, not the container's fault."""
    stall = "import os, signal\nos.kill(os.getpid(), signal.SIGSTOP)\n"
    with DockerSandbox(pool_size=1, timeout_s=1.0, runtime=sandbox_runtime) as sandbox:
        sandbox.grace_s = 1.0
        container = sandbox._acquire()
        sandbox._release(container, healthy=True)
        container.container.pause()  # freeze the supervisor itself: it can no longer answer
        verdicts = sandbox.run([Job(stall, SPEC), Job(GOOD, SPEC)])
        assert sandbox.stats.faults == 1
        assert sandbox.stats.containers_started == 2
    assert verdicts[0].status is Status.TIMEOUT  # it stops itself: its true verdict
    assert verdicts[1].status is Status.VERIFIED


def test_code_larger_than_the_channel_buffer_reaches_its_candidate() -> None:
    """The supervisor writes the code into the candidate's own channel (never via the zygote);
    3 MB is far over the socket buffer, so the write waits for the candidate to read it."""
    big = GOOD + ("# " + "p" * 98 + "\n") * 30_000
    with DockerSandbox(pool_size=1) as sandbox:
        verdicts = sandbox.run([Job(big, SPEC), Job(GOOD, SPEC)])
        assert sandbox.stats.faults == 0
    assert [v.status for v in verdicts] == [Status.VERIFIED, Status.VERIFIED]
