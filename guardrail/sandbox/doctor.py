"""`guardrail sandbox check`: prove the sandbox's hardening by probing from inside a container.

The probe is an ordinary candidate run through the real pipeline; each hardening property is one
test statement, so the verdict's per-test outcomes are the doctor's findings. Then a job that
leaves everything it can behind (files, a deep tree, queues, a daemon) and, in the same
container, a job that looks for what is left: cleanup between jobs is proved, not assumed. The
container's own configuration is read back from the engine as a second, independent look.
One property is a statement the judge runs on itself (`NO_FOREIGN_CODE`): the judge is forked
from PID 1 for the job, so it shows what PID 1 had loaded too; nothing from the image's packages
(``site``, ``.pth`` files, ``sitecustomize``) may be among it, on any image, a user's own too.
Then hostile modules of an indexed tree try to have a wrong retrieved text verified
(`guardrail.sandbox.doctor_context`).

Under gVisor (runsc) a few probes look at what its kernel shows differently; their expectations
are runtime-aware and never weaker: each still proves the property it is named after.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from guardrail.errors import InputError, SandboxError
from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import LABEL, DockerSandbox
from guardrail.sandbox.doctor_context import module_context_checks
from guardrail.spec import Spec
from guardrail.verdict import TestOutcome, Verdict

__all__ = ["Check", "DoctorReport", "check_sandbox"]

PROBE = """
import ctypes
import os
import resource
import socket


def _status_field(name):
    with open("/proc/self/status") as handle:
        for line in handle:
            if line.startswith(name + ":"):
                return line.split()[1]
    return None


def _network_reachable():
    try:
        socket.create_connection(("1.1.1.1", 53), timeout=0.5).close()
        return True
    except OSError:
        return False


def _writable(path):
    try:
        with open(path, "w") as handle:
            handle.write("x")
        os.unlink(path)
        return True
    except OSError:
        return False


def _read(path):
    try:
        with open(path, "rb") as handle:
            return handle.read()
    except OSError:
        return None


def _no_new_privs():
    # The kernel's own answer: gVisor's /proc/self/status has no NoNewPrivs line.
    return ctypes.CDLL(None, use_errno=True).prctl(39, 0, 0, 0, 0)  # PR_GET_NO_NEW_PRIVS


def _tmp_executes():
    import subprocess

    path = "/tmp/guardrail-probe.sh"
    with open(path, "w") as handle:
        handle.write("#!/bin/sh\\nexit 0\\n")
    os.chmod(path, 0o700)
    try:
        return subprocess.run([path], check=False).returncode == 0
    except OSError:
        return False
    finally:
        os.unlink(path)


def _posix_queue_created():
    libc = ctypes.CDLL(None)
    queue = libc.mq_open(b"/guardrail-probe", os.O_CREAT | os.O_RDWR, 0o600, None)
    if queue < 0:
        return False
    libc.mq_close(queue)
    libc.mq_unlink(b"/guardrail-probe")
    return True


def _keyring_usable():
    libc = ctypes.CDLL(None)
    libc.syscall.restype = ctypes.c_long
    add_key = 248  # x86-64; kernel keyrings outlive processes and are shared per uid
    return libc.syscall(add_key, b"user", b"guardrail-probe", b"x", 1, -2) >= 0


def _ipc_refused():
    # The errno of creating each kind of object that outlives its process (0: created).
    libc = ctypes.CDLL(None, use_errno=True)
    calls = {
        "shmget": lambda: libc.shmget(0, 4096, 0o1000 | 0o600),
        "semget": lambda: libc.semget(0, 1, 0o1000 | 0o600),
        "msgget": lambda: libc.msgget(0, 0o1000 | 0o600),
        "mq_open": lambda: libc.mq_open(b"/guardrail-probe", os.O_CREAT | os.O_RDWR, 0o600, None),
    }
    return {name: ctypes.get_errno() if call() < 0 else 0 for name, call in calls.items()}


def _writable_places():
    found = []
    for root, folders, _files in os.walk("/"):
        if root in ("/proc", "/sys"):
            folders[:] = []
        elif os.access(root, os.W_OK):
            found.append(root)
    return found


def _interpreter_flags(cmdline):
    # The options before "-c CODE" of the command line PID 1 runs (/proc/1/cmdline).
    args = [arg.decode(errors="replace") for arg in cmdline.split(b"\\0")[1:]]
    return args[: args.index("-c")] if "-c" in args else args


_FOUND = {}


def probe():
    # Looked at once, and every property reads the same findings: walking / for each of them
    # outlasts the time limit under gVisor.
    if not _FOUND:
        _FOUND.update(_look())
    return _FOUND


def _look():
    return {
        "uid": os.getuid(),
        "network": _network_reachable(),
        "root_writable": _writable("/guardrail-probe"),
        "tmp_writable": _writable("/tmp/guardrail-probe"),
        "cap_eff": int(_status_field("CapEff"), 16),
        "no_new_privs": _no_new_privs(),
        "memory_limit": resource.getrlimit(resource.RLIMIT_AS)[0],
        "process_limit": resource.getrlimit(resource.RLIMIT_NPROC)[0],
        "file_size_limit": resource.getrlimit(resource.RLIMIT_FSIZE)[0],
        "cpu_limit": resource.getrlimit(resource.RLIMIT_CPU)[0],
        "tmp_executes": _tmp_executes(),
        "dev_shm": os.path.exists("/dev/shm"),
        "dev_shm_mount": os.path.ismount("/dev/shm"),
        "dev_shm_writable": os.access("/dev/shm", os.W_OK),
        "env": sorted(os.environ),
        "pid1_environ": _read("/proc/1/environ"),
        "pid1_flags": _interpreter_flags(_read("/proc/1/cmdline") or b""),
        "mqueue_limit": resource.getrlimit(resource.RLIMIT_MSGQUEUE)[0],
        "posix_queue_created": _posix_queue_created(),
        "keyring_usable": _keyring_usable(),
        "ipc_refused": _ipc_refused(),
        "writable": _writable_places(),
    }
"""

NO_FOREIGN_CODE = "PID 1 and the judge load only the standard library (no site, .pth, packages)"
PROPERTIES = {
    "candidate runs as an unprivileged user": "assert probe()['uid'] >= 1000",
    "no network": "assert probe()['network'] is False",
    "read-only root filesystem": "assert probe()['root_writable'] is False",
    "writable /tmp": "assert probe()['tmp_writable'] is True",
    "no capabilities left": "assert probe()['cap_eff'] == 0",
    "no new privileges": "assert probe()['no_new_privs'] == 1",
    "memory limit in force": "assert 0 < probe()['memory_limit'] <= 8 * 1024 ** 3",
    "process limit in force": "assert 0 < probe()['process_limit'] <= 4096",
    "file size limit in force": "assert 0 < probe()['file_size_limit'] <= 1024 ** 3",
    "CPU time limit in force": "assert 0 < probe()['cpu_limit'] <= 3600",
    "nothing executes from /tmp (noexec)": "assert probe()['tmp_executes'] is False",
    "no shared /dev/shm (private IPC)": "assert probe()['dev_shm'] is False",
    "no host environment": "assert set(probe()['env']) <= {'PATH', 'HOME', 'TMPDIR', 'LANG'}",
    "supervisor's environment closed": "assert probe()['pid1_environ'] is None",
    "supervisor started isolated and without site (python3 -I -S)": (
        "assert {'-I', '-S'} <= set(probe()['pid1_flags']), probe()['pid1_flags']"
    ),
    # Run in the judge, not the candidate: forked from PID 1 for this job, it holds every module
    # PID 1 had loaded, and its own.
    NO_FOREIGN_CODE: (
        "from guardrail_runner.boot import foreign_code\n"
        "assert not (found := foreign_code()), '; '.join(found)"
    ),
    "no POSIX message queues (RLIMIT_MSGQUEUE 0 and seccomp)": (
        "assert probe()['mqueue_limit'] == 0 and probe()['posix_queue_created'] is False"
    ),
    "no kernel keyrings (add_key blocked)": "assert probe()['keyring_usable'] is False",
    "System V IPC and POSIX queues blocked (seccomp)": (
        "assert probe()['ipc_refused'] == {'shmget': 3001, 'semget': 3001, 'msgget': 3001,"
        " 'mq_open': 3002}"  # the filter's own errnos (`runner.seccomp.REFUSED`)
    ),
    "writable only /tmp and /dev/mqueue (swept after each job)": (
        "assert set(probe()['writable']) <= {'/tmp', '/dev/mqueue'}"
    ),
}

# Leaves behind everything a job can: files of every kind, a deep tree it cannot list, POSIX and
# System V queues, a setsid daemon holding an abstract socket.
LEAVER = """
import ctypes
import os
import socket
import time

libc = ctypes.CDLL(None)
os.chdir("/tmp")
os.mkfifo("fifo")
open("file", "w").close()
os.symlink("loop", "loop")
os.mkdir("deep")
os.chdir("deep")
for _ in range(1500):
    os.mkdir("d" * 200)
    os.chdir("d" * 200)
os.chdir("/tmp")
os.chmod("deep", 0)
libc.mq_open(b"/guardrail-leftover", os.O_CREAT | os.O_RDWR, 0o666, None)
libc.msgget(0, 0o1000 | 0o666)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        server = socket.socket(socket.AF_UNIX)
        server.bind("\\0guardrail-leftover")
        time.sleep(3600)
    os._exit(0)
time.sleep(0.1)


def leave():
    return True
"""

LEFTOVERS = """
import ctypes
import errno
import os


def _sysv_objects():
    # /proc/sysvipc lists them under runc; gVisor has none. There each id is asked for directly
    # (gVisor numbers them from 0 up): EINVAL means no object has that id, 3001 (the runner's
    # filter) or EPERM that the call is refused (IPC_STAT never says either), anything else
    # that an object exists, whoever owns it.
    if os.path.isdir("/proc/sysvipc"):
        count = 0
        for kind in ("shm", "sem", "msg"):
            with open(f"/proc/sysvipc/{kind}") as handle:
                count += len(handle.readlines()) - 1
        return count
    libc = ctypes.CDLL(None, use_errno=True)
    buffer = ctypes.create_string_buffer(512)
    stats = (
        lambda ident: libc.shmctl(ident, 2, buffer),
        lambda ident: libc.semctl(ident, 0, 2, buffer),
        lambda ident: libc.msgctl(ident, 2, buffer),
    )
    absent = (errno.EINVAL, errno.EIDRM, errno.EPERM, 3001)
    return sum(
        stat(ident) == 0 or ctypes.get_errno() not in absent
        for stat in stats
        for ident in range(512)
    )


def leftovers():
    me = os.getuid()
    strangers = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/status") as handle:
                uid = next(int(line.split()[1]) for line in handle if line.startswith("Uid:"))
        except (OSError, StopIteration):
            continue
        if uid not in (0, me, me + 1):
            strangers.append(uid)
    ipc = _sysv_objects()
    with open("/proc/net/unix") as handle:
        abstract = [line.split()[-1] for line in handle if line.split()[-1].startswith("@")]
    return {
        "processes": len(strangers),
        "files": [name for name in os.listdir("/tmp") if not name.startswith(".guardrail-")],
        "queues": os.listdir("/dev/mqueue") if os.path.isdir("/dev/mqueue") else [],
        "ipc": ipc,
        "abstract_sockets": abstract,
    }
"""

LEFTOVER_PROPERTIES = {
    "no process left by an earlier job": "assert leftovers()['processes'] == 0",
    "no file left in /tmp by an earlier job": "assert leftovers()['files'] == []",
    "no POSIX queue left by an earlier job": "assert leftovers()['queues'] == []",
    "no System V IPC left by an earlier job": "assert leftovers()['ipc'] == 0",
    "no abstract socket left by an earlier job": "assert leftovers()['abstract_sockets'] == []",
}
# gVisor keeps an empty, root-owned /dev/shm directory in its own /dev even with a private IPC
# namespace: no mount, nothing a job can write, so nothing to share. It lets any uid read
# /proc/1/environ: then that environment must be empty, which leaves just as little to read.
# And it refuses RLIMIT_MSGQUEUE: there the seccomp filter alone keeps queues from being made.
GVISOR_PROPERTIES = {
    **PROPERTIES,
    "no shared /dev/shm (private IPC)": (
        "assert not probe()['dev_shm'] or not (probe()['dev_shm_mount']"
        " or probe()['dev_shm_writable'])"
    ),
    "supervisor's environment closed": "assert probe()['pid1_environ'] in (None, b'')",
    "no POSIX message queues (RLIMIT_MSGQUEUE 0 and seccomp)": (
        "assert probe()['ipc_refused']['mq_open'] == 3002"  # the filter's (seccomp.REFUSED)
        " and probe()['posix_queue_created'] is False"
    ),
}


class Check(BaseModel):
    name: str
    ok: bool
    detail: str = ""


class DoctorReport(BaseModel):
    engine: str
    runtime: str
    image: str
    image_id: str
    checks: list[Check]

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)


def check_sandbox(sandbox: DockerSandbox) -> DoctorReport:
    """Engine, image, and every hardening property; raises `SandboxError` if none can run.

    ``sandbox`` must be a one-container pool, so that the leftover check's two jobs share one.
    """
    if sandbox.pool_size != 1:
        raise InputError(f"check_sandbox needs a pool of one container, got {sandbox.pool_size}")
    version = str(sandbox.client.version().get("Version", "?"))
    image_id = sandbox.image_id
    properties = GVISOR_PROPERTIES if sandbox.gvisor else PROPERTIES
    faults = sandbox.stats.faults
    probe, leaver, leftovers = sandbox.run(
        [
            Job(PROBE, Spec.build(tuple(properties.values()), "probe")),
            Job(LEAVER, Spec.build(("assert leave()",), "leave")),
            Job(LEFTOVERS, Spec.build(tuple(LEFTOVER_PROPERTIES.values()), "leftovers")),
        ]
    )
    if not probe.tests:
        raise SandboxError(f"the hardening probe could not run: {probe.message}")
    # After a fault the next job runs in a fresh container, where "nothing left" proves nothing.
    kept = leaver.verified and sandbox.stats.faults == faults
    checks = _checks(properties, probe)
    checks.append(
        Check(
            name="a job's leftovers are cleaned up without losing the container",
            ok=kept,
            detail="" if kept else f"{leaver.reason}: {leaver.message}"[:300],
        )
    )
    checks += _checks(LEFTOVER_PROPERTIES, leftovers)
    checks += [
        Check(name=f"context: {name}", ok=held, detail=detail)
        for name, held, detail in module_context_checks(sandbox)
    ]
    checks.extend(_container_checks(sandbox.inspect_live_container(), sandbox.runtime_name))
    return DoctorReport(
        engine=version,
        runtime=sandbox.runtime_name,
        image=sandbox.image,
        image_id=image_id,
        checks=checks,
    )


def _checks(properties: dict[str, str], verdict: Verdict) -> list[Check]:
    if not verdict.tests:  # the job could not run at all: every property is unproved
        return [Check(name=name, ok=False, detail=verdict.message[:300]) for name in properties]
    return [
        Check(name=name, ok=outcome.passed, detail="" if outcome.passed else _detail(outcome))
        for name, outcome in zip(properties, verdict.tests, strict=True)
    ]


def _detail(outcome: TestOutcome) -> str:
    said = f": {outcome.detail}" if outcome.detail else ""
    return f"{outcome.outcome}{said}"[:500]


def _container_checks(attrs: dict[str, Any], runtime: str) -> list[Check]:
    host = attrs.get("HostConfig", {})
    caps = set(host.get("CapAdd") or [])
    expected = [
        (f"container: runtime {runtime}", host.get("Runtime") == runtime),
        ("container: network mode none", host.get("NetworkMode") == "none"),
        ("container: read-only rootfs", host.get("ReadonlyRootfs") is True),
        ("container: all capabilities dropped", "ALL" in (host.get("CapDrop") or [])),
        (
            "container: only SETUID/SETGID/KILL added",
            caps <= {"SETUID", "SETGID", "KILL", "CAP_SETUID", "CAP_SETGID", "CAP_KILL"},
        ),
        ("container: no-new-privileges", "no-new-privileges" in (host.get("SecurityOpt") or [])),
        ("container: pids limit", (host.get("PidsLimit") or 0) > 0),
        ("container: memory limit", (host.get("Memory") or 0) > 0),
        ("container: CPU limit", (host.get("NanoCpus") or 0) > 0),
        ("container: log driver none", host.get("LogConfig", {}).get("Type") == "none"),
        (
            "container: /tmp is a noexec tmpfs",
            "noexec" in (host.get("Tmpfs") or {}).get("/tmp", ""),
        ),
        ("container: private IPC namespace", host.get("IpcMode") == "none"),
        (
            "container: labelled for leftover sweeps",
            LABEL in attrs.get("Config", {}).get("Labels", {}),
        ),
    ]
    return [Check(name=name, ok=bool(ok)) for name, ok in expected]
