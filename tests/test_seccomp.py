"""The runner's seccomp filter: IPC that outlives a job is refused in every job process.

Under gVisor it is the only thing that closes System V IPC and POSIX queues (there is nothing to
sweep); under runc it is a layer before the sweeps. Here on the host (in forked processes) and
in real containers under each runtime, in the candidate and in the judge.
"""

from __future__ import annotations

import errno
import os
import platform
import signal
from pathlib import Path

import pytest

from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.runner import privilege
from guardrail.sandbox.runner.seccomp import (
    REFUSED,
    TABLES,
    ConfinementError,
    Filter,
    program,
    refused_facility,
)
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

# What each refused call returns and its errno, in the calling process (x86-64 or aarch64).
CALLS = """
import ctypes, os, platform

_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
_ADD_KEY = {"x86_64": 248, "aarch64": 217}[platform.machine()]


def _errno(result):
    return ctypes.get_errno() if result < 0 else 0


def refused():
    return {
        "shmget": _errno(_libc.shmget(0, 4096, 0o1000 | 0o600)),
        "semget": _errno(_libc.semget(0, 1, 0o1000 | 0o600)),
        "msgget": _errno(_libc.msgget(0, 0o1000 | 0o600)),
        "mq_open": _errno(_libc.mq_open(b"/guardrail-x", os.O_CREAT | os.O_RDWR, 0o600, None)),
        "add_key": _errno(_libc.syscall(_ADD_KEY, b"user", b"guardrail-x", b"x", 1, -2)),
        "getpid": os.getpid() > 0,
    }
"""
# The filter's own errno for each facility (`seccomp.REFUSED`): no kernel call returns them.
REFUSED_ERRNOS = {
    "shmget": 3001,
    "semget": 3001,
    "msgget": 3001,
    "mq_open": 3002,
    "add_key": 3003,
    "getpid": True,
}


def _in_child(body: str, install: bool) -> int:
    """Run ``body`` (which defines ``refused``) in a forked process, optionally filtered first;
    the child exits 0 if every IPC call got its facility's errno, 1 if not; returns its wait
    status."""
    seccomp = Filter()
    pid = os.fork()
    if pid == 0:
        try:
            if install:
                seccomp.install()
            namespace: dict[str, object] = {}
            exec(body, namespace)
            result = namespace["refused"]()  # type: ignore[operator]
            os._exit(0 if result == REFUSED_ERRNOS else 1)
        finally:
            os._exit(2)
    return os.waitpid(pid, 0)[1]


def test_both_tables_refuse_the_same_calls() -> None:
    names = [set(calls) for _arch, calls in TABLES.values()]
    assert names[0] == names[1]
    assert {"shmget", "semtimedop", "msgrcv", "mq_open", "mq_getsetattr", "keyctl"} <= names[0]
    # Each instruction is 8 bytes: arch check (3), nr load, x32 check (2), one per call, the
    # ALLOW and one ERRNO return per facility.
    returns = 1 + len(REFUSED)
    assert len(program("x86_64")) == 8 * (3 + 1 + 2 + len(names[0]) + returns)
    assert len(program("aarch64")) == 8 * (3 + 1 + len(names[0]) + returns)
    for _arch, calls in TABLES.values():  # every refused call belongs to exactly one facility
        owners = [
            [c for c, (_, prefixes) in REFUSED.items() if n.startswith(prefixes)] for n in calls
        ]
        assert all(len(owner) == 1 for owner in owners), owners
    assert all(code > 150 for code in REFUSED)  # above every errno Linux defines
    with pytest.raises(ConfinementError, match="no seccomp table for machine 'riscv64'"):
        program("riscv64")


def test_the_filter_refuses_ipc_and_allows_the_rest() -> None:
    assert os.waitstatus_to_exitcode(_in_child(CALLS, install=False)) == 1  # control
    assert os.waitstatus_to_exitcode(_in_child(CALLS, install=True)) == 0


@pytest.mark.skipif(platform.machine() != "x86_64", reason="the x32 ABI exists on x86-64 only")
def test_x32_calls_kill_the_process() -> None:
    x32_getpid = "import ctypes\nctypes.CDLL(None).syscall(0x40000000 | 39)\nrefused = dict\n"
    status = _in_child(x32_getpid, install=True)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGSYS


class _Refused(Filter):
    def install(self) -> None:
        raise ConfinementError("the kernel refused the seccomp filter: Invalid argument")


def test_without_the_filter_a_job_runs_only_where_ipc_is_limited_and_swept(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Fail closed: the filter may be missing only where RLIMIT_MSGQUEUE held and
    /proc/sysvipc lets the cleanup find System V objects (runc); gVisor has neither."""
    privilege._confine(_Refused(), queues_limited=True)  # this host has /proc/sysvipc
    with pytest.raises(ConfinementError, match=r"refused the seccomp filter.*refusing to run"):
        privilege._confine(_Refused(), queues_limited=False)
    with pytest.raises(ConfinementError, match="no seccomp filter for this machine"):
        privilege._confine(None, queues_limited=False)
    monkeypatch.setattr(os.path, "isdir", lambda path: False)
    with pytest.raises(ConfinementError):
        privilege._confine(None, queues_limited=True)


@pytest.mark.docker
def test_candidate_and_judge_get_the_filters_errnos_for_ipc(sandbox_runtime: str) -> None:
    """In a real container: the candidate's calls and the judge's own (the test runs there)."""
    spec = Spec.from_tests(
        [
            f"assert refused() == {REFUSED_ERRNOS!r}",
            "import ctypes; assert ctypes.CDLL(None).shmget(0, 4096, 0o1000 | 0o600) == -1",
        ]
    )
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        (verdict,) = sandbox.run([Job(CALLS, spec)])
    assert (verdict.status, verdict.reason) == (Status.VERIFIED, Reason.PASSED), verdict


def test_a_refused_facility_is_read_from_the_errno_its_cause_or_its_text() -> None:
    queues = "POSIX message queues (mq_open, ...)"
    assert refused_facility({"errnos": [3002]}) == queues
    assert refused_facility({"errnos": [errno.ENOENT, 3001]}) == REFUSED[3001][0]  # a cause
    assert refused_facility({"message": "cannot open: [Errno 3002] Unknown error 3002"}) == queues
    assert refused_facility({"message": "Unknown error 3003"}) == REFUSED[3003][0]
    for unrelated in ({"errnos": [errno.EPERM]}, {"message": "[Errno 1] x"}, {"errnos": "3002"}):
        assert refused_facility(unrelated) is None
    assert refused_facility("3002") is None


SQUARE = Spec.from_tests(
    ["assert square(3) == 9", "assert square(7919) == 62710561", "assert square(-2) == 4"]
)
REFUSING = Path(__file__).parent / "snippets" / "refused_facility"
# The test's own call, in the judge's process (which runs under the filter too).
JUDGES_OWN_QUEUE = Spec.from_tests(
    [
        "import ctypes, os\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "if libc.mq_open(b'/judge', os.O_CREAT | os.O_RDWR, 0o600, None) < 0:\n"
        "    raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))\n"
        "assert square(3) == 9"
    ]
)


@pytest.mark.docker
def test_correct_code_the_filter_refuses_is_refused_facility_never_failed(
    sandbox_runtime: str,
) -> None:
    """Named for the facility it needs; the wrong twin that falls back stays failed, and a
    candidate faking the errno gets unverifiable, never verified."""
    names = [
        "posix_queue_square",
        "sysv_queue_wrapped_square",
        "posix_queue_at_import",
        "posix_queue_fallback_wrong",
        "fakes_the_refusal",
    ]
    jobs = [Job((REFUSING / f"{name}.py").read_text(), SQUARE) for name in names]
    jobs.append(Job("def square(x):\n    return x * x\n", JUDGES_OWN_QUEUE))
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        verdicts = dict(zip([*names, "judges_own"], sandbox.run(jobs), strict=True))
    refused = (Status.UNVERIFIABLE, Reason.REFUSED_FACILITY)
    for name, facility in [
        ("posix_queue_square", "POSIX message queues"),
        ("sysv_queue_wrapped_square", "System V IPC"),
        ("posix_queue_at_import", "POSIX message queues"),
        ("judges_own", "POSIX message queues"),
    ]:
        verdict = verdicts[name]
        assert (verdict.status, verdict.reason) == refused, (name, verdict)
        assert facility in verdict.message, (name, verdict.message)
    fallback = verdicts["posix_queue_fallback_wrong"]
    assert (fallback.status, fallback.reason) == (Status.FAILED, Reason.TESTS_FAILED)
    faker = verdicts["fakes_the_refusal"]
    assert (faker.status, faker.reason) == refused
    assert [t.fault for t in faker.tests] == [
        None,
        Reason.REFUSED_FACILITY,
        Reason.REFUSED_FACILITY,
    ]
