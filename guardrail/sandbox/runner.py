"""The in-container runner: a supervisor, a zygote, a judge and a candidate. Standard library only.

This file is sent to a long-lived sandbox container at start-up and runs there as PID 1
(``python3 -I``). It is also imported on the host for `precheck` and the plain-data codec.

What it defends against (the candidate is hostile; the tests and this file are trusted):

* forging the verdict: only the judge writes the report, on a pipe no candidate holds; the
  candidate's exit code and output are never read as a verdict; a candidate that exits, raises
  ``SystemExit``, patches builtins or prints markers only changes its own process;
* cheating the comparison: arguments and return values cross as plain data (exact builtin types,
  no pickle) and every comparison happens in the judge; objects with a forged ``__eq__`` cannot
  cross at all (the test becomes ``ERROR:Unserialisable``);
* reading the tests: the candidate is forked from a zygote that never held a test, runs under its
  own fresh unprivileged uid (so ``/proc/<judge>/{environ,fd,mem}`` are closed to it), with an
  empty environment;
* spoiling other jobs: fresh uids per job, everything left under them killed and their files
  removed after the job, rlimits per process (memory, processes, file size, CPU), a wall-clock
  deadline enforced by the judge and again by the supervisor.

What it does not defend against: kernel exploits and side channels (the container and the host's
seccomp/AppArmor profile are the next layers), and hostile *tests*.

Process tree inside the container::

    supervisor (uid 0, caps SETUID/SETGID/KILL only)  <- frames on stdin/stdout from the host
    ├── zygote (uid 0; forked before any job, holds no test)
    │   └── candidate (uid base+2n)    loads the code, answers calls from the judge
    ├── judge (uid base+2n+1)          runs setup + tests, calls into the candidate, writes report
    └── reaper (uid of the job)        kill(-1) and file cleanup as that uid after the job
"""

from __future__ import annotations

import ast
import base64
import builtins
import collections
import contextlib
import decimal
import fractions
import json
import os
import re
import select
import signal
import socket
import struct
import sys
import time
from typing import Any, NoReturn

PROTOCOL = 1
MAX_FRAME = 16 * 1024 * 1024
_HEADER = struct.Struct(">I")

# ---------------------------------------------------------------- framing


class ChannelClosed(Exception):
    """The other end closed the channel."""


def pack_frame(obj: object) -> bytes:
    data = json.dumps(obj, separators=(",", ":")).encode("utf-8")
    return _HEADER.pack(len(data)) + data


def read_exact(fd: int, size: int, deadline: float | None = None) -> bytes:
    """Read exactly ``size`` bytes from ``fd``; `TimeoutError` past ``deadline`` (monotonic)."""
    chunks: list[bytes] = []
    while size:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise TimeoutError
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise ChannelClosed
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, deadline: float | None = None) -> Any:
    (size,) = _HEADER.unpack(read_exact(fd, _HEADER.size, deadline))
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes is over the {MAX_FRAME} byte limit")
    return json.loads(read_exact(fd, size, deadline))


def write_frame(fd: int, obj: object) -> None:
    data = memoryview(pack_frame(obj))
    while data:
        data = data[os.write(fd, data) :]


# ---------------------------------------------------------------- plain-data codec


class Unserialisable(Exception):
    """A value of a type that cannot cross the sandbox boundary as plain data."""


_MAX_DEPTH = 200
_MAPPING_TAGS: dict[type, str] = {
    dict: "d",
    collections.OrderedDict: "od",
    collections.Counter: "ctr",
}


def encode(value: object, depth: int = 0) -> Any:
    """Exact builtin types (and a few stdlib value types) to JSON; anything else is refused.

    Exact ``type(...) is`` checks on purpose: a ``str`` subclass with a forged ``__eq__`` must
    not pass as a ``str``.
    """
    if depth > _MAX_DEPTH:
        raise Unserialisable("nesting deeper than 200 levels")
    kind = type(value)
    if value is None or kind in (bool, int, str):
        return value
    inner = depth + 1
    if type(value) is float:
        return {"f": repr(value)}
    if type(value) is list:
        return [encode(item, inner) for item in value]
    if type(value) is tuple:
        return {"t": [encode(item, inner) for item in value]}
    if type(value) in _MAPPING_TAGS:
        mapping: dict[Any, Any] = value  # type: ignore[assignment]  # narrowed by the check
        pairs = [[encode(k, inner), encode(v, inner)] for k, v in mapping.items()]
        return {_MAPPING_TAGS[kind]: pairs}
    if type(value) is set or type(value) is frozenset:
        return {"s" if kind is set else "fs": [encode(item, inner) for item in value]}
    if type(value) is collections.deque:
        return {"dq": [encode(item, inner) for item in value]}
    if type(value) is bytes or type(value) is bytearray:
        return {"b" if kind is bytes else "ba": base64.b64encode(value).decode("ascii")}
    if type(value) is complex:
        return {"c": [repr(value.real), repr(value.imag)]}
    if type(value) is range:
        return {"r": [value.start, value.stop, value.step]}
    if type(value) is decimal.Decimal:
        return {"dec": str(value)}
    if type(value) is fractions.Fraction:
        return {"frac": [value.numerator, value.denominator]}
    raise Unserialisable(f"a value of type {kind.__qualname__} cannot cross as plain data")


def decode(data: Any) -> Any:
    """Inverse of `encode`; builds only builtin and stdlib value types."""
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is list:
        return [decode(item) for item in data]
    if type(data) is not dict or len(data) != 1:
        raise ValueError("malformed value")
    ((tag, payload),) = data.items()
    if tag == "f":
        return float(payload)
    if tag == "t":
        return tuple(decode(item) for item in payload)
    if tag in ("d", "od", "ctr"):
        factory = {"d": dict, "od": collections.OrderedDict, "ctr": collections.Counter}[tag]
        # Built from a dict: Counter(pairs) would count the pairs instead of taking them.
        return factory({decode(k): decode(v) for k, v in payload})
    if tag in ("s", "fs"):
        return (set if tag == "s" else frozenset)(decode(item) for item in payload)
    if tag == "dq":
        return collections.deque(decode(item) for item in payload)
    if tag in ("b", "ba"):
        raw = base64.b64decode(payload)
        return raw if tag == "b" else bytearray(raw)
    if tag == "c":
        return complex(float(payload[0]), float(payload[1]))
    if tag == "r":
        return range(*payload)
    if tag == "dec":
        return decimal.Decimal(payload)
    if tag == "frac":
        return fractions.Fraction(*payload)
    raise ValueError(f"unknown value tag {tag!r}")


def _by_position_and_name(args: list[Any], kwargs: dict[str, Any]) -> dict[int | str, Any]:
    """Arguments keyed by position and keyword name, so before and after can be compared."""
    keyed: dict[int | str, Any] = dict(enumerate(args))
    keyed.update(kwargs)
    return keyed


def _can_write_back(value: Any) -> bool:
    """Whether a changed argument can be copied back exactly: a mutable container whose items are
    all immutable. Inner containers would come back as new objects, silently breaking aliasing."""
    if type(value) not in _MUTABLE:
        return False
    if type(value) is bytearray:
        return True
    items = [*value.keys(), *value.values()] if isinstance(value, dict) else list(value)
    return all(_immutable(item) for item in items)


def _immutable(value: Any) -> bool:
    """True for tuples and frozensets made only of immutable builtin values."""
    if type(value) in (tuple, frozenset):
        return all(_immutable(item) for item in value)
    return type(value) not in _MUTABLE


def write_back(original: Any, updated: Any) -> None:
    """Copy an argument's post-call state into the judge's own object (in-place mutation)."""
    kind = type(original)
    if kind is list or kind is bytearray:
        original[:] = updated
    elif kind in (dict, collections.OrderedDict, collections.Counter, set):
        original.clear()
        original.update(updated)
    elif kind is collections.deque:
        original.clear()
        original.extend(updated)


_MUTABLE = (
    list,
    dict,
    set,
    bytearray,
    collections.deque,
    collections.OrderedDict,
    collections.Counter,
)

# ---------------------------------------------------------------- static checks (host too)

# A line that starts like Python: text that does not parse and has none is prose, not code.
_CODE_HINT = re.compile(
    r"^\s*(def |class |import |from \S+ import |@\w|return\b|(if|for|while|with|try)\b.*:\s*$"
    r"|[\w.\[\]]+\s*[-+*/]?=)",
    re.MULTILINE,
)


def precheck(code: str) -> tuple[str, str] | None:
    """``(reason, message)`` when the code cannot run at all, else None. Runs nothing."""
    if not code.strip():
        return "not_python", "the candidate is empty"
    try:
        ast.parse(code)
    except SyntaxError as exc:
        if not _CODE_HINT.search(code):
            return "not_python", "the candidate is not Python source (it does not parse)"
        return "syntax_error", f"SyntaxError at line {exc.lineno}: {exc.msg}"
    except ValueError as exc:  # e.g. source with NUL bytes
        return "not_python", f"the candidate is not Python source: {exc}"
    return None


def plausible_functions(code: str) -> list[str]:
    """Top-level public functions that no other top-level function calls (helpers excluded)."""
    tree = ast.parse(code)
    defined = [
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("_")
    ]
    called = {
        node.func.id
        for top in tree.body
        if isinstance(top, ast.FunctionDef | ast.AsyncFunctionDef)
        for node in ast.walk(top)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id != top.name
    }
    return [name for name in defined if name not in called] or defined


# ---------------------------------------------------------------- candidate process


def _describe_exception(exc: BaseException) -> dict[str, Any]:
    bases = [k.__name__ for k in type(exc).__mro__ if getattr(builtins, k.__name__, None) is k]
    return {"type": type(exc).__name__, "bases": bases, "message": str(exc)[:2000]}


def candidate_serve(channel: int, code: str, entry_point: str) -> None:
    """Load the candidate and answer the judge's calls until the channel closes."""
    namespace: dict[str, Any] = {"__name__": "__candidate__", "__builtins__": builtins}
    try:
        exec(compile(code, "<candidate>", "exec"), namespace)
    except BaseException as exc:
        write_frame(channel, {"loaded": False, **_describe_exception(exc)})
        return
    functions = {
        name: value
        for name, value in namespace.items()
        if callable(value) and getattr(value, "__module__", None) == "__candidate__"
    }
    alias = None
    if not callable(namespace.get(entry_point)):
        choices = [name for name in plausible_functions(code) if name in functions]
        if len(choices) != 1:
            defined = ", ".join(sorted(functions)) or "no functions"
            write_frame(
                channel,
                {
                    "loaded": False,
                    "type": "MissingEntryPoint",
                    "bases": [],
                    "message": f"the tests call {entry_point!r}; the candidate defines {defined}",
                },
            )
            return
        alias = choices[0]
        functions[entry_point] = functions[alias]
    write_frame(channel, {"loaded": True, "functions": sorted(functions), "alias": alias})
    while True:
        request = read_frame(channel)
        target = functions[request["name"]]
        args = [decode(item) for item in request["args"]]
        kwargs = {key: decode(item) for key, item in request["kwargs"].items()}
        try:
            result = target(*args, **kwargs)
        except BaseException as exc:
            reply: dict[str, Any] = {"raised": _describe_exception(exc)}
        else:
            try:
                reply = {
                    "value": encode(result),
                    "args": [encode(a) for a in args],
                    "kwargs": {k: encode(v) for k, v in kwargs.items()},
                }
            except Unserialisable as exc:
                reply = {"unserialisable": str(exc)}
        write_frame(channel, reply)


# ---------------------------------------------------------------- judge process


class _Fault(BaseException):
    """The call could not be judged; the outcome word is in ``args[0]``."""


_NEVER_REBUILT = (StopIteration, StopAsyncIteration)


class CandidateRaised(Exception):
    """Stand-in for a candidate exception that is not a builtin one (or is a BaseException)."""


def _rebuild_exception(info: dict[str, Any]) -> BaseException:
    name = str(info.get("type", "Exception"))
    message = str(info.get("message", ""))
    for base_name in info.get("bases", []):
        base = getattr(builtins, str(base_name), None)
        if base in _NEVER_REBUILT:
            break  # raised inside a test, it would end the test's map() or filter() early
        if isinstance(base, type) and issubclass(base, Exception):
            cls: type[Exception] = base if base_name == name else type(name, (base,), {})
            try:
                rebuilt: BaseException = cls(message)
            except TypeError:
                break
            return rebuilt
    stand_in: type[Exception] = type(name, (CandidateRaised,), {})
    return stand_in(message)


class Judge:
    """Runs the spec's tests in a namespace whose candidate functions are remote proxies."""

    def __init__(self, channel: int, deadline: float) -> None:
        self.channel = channel
        self.deadline = deadline
        self.fault: str | None = None  # sticky: once set, every later test reports it
        self.last_fault: tuple[str, str] | None = None  # the latest fault within one test

    def call(self, name: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.fault:
            raise _Fault(self.fault)
        try:
            request: dict[str, Any] = {
                "name": name,
                "args": [encode(a) for a in args],
                "kwargs": {str(k): encode(v) for k, v in kwargs.items()},
            }
            before = _by_position_and_name(request["args"], request["kwargs"])
            targets = _by_position_and_name(list(args), {str(k): v for k, v in kwargs.items()})
        except Unserialisable as exc:
            self._fail("ERROR:Unserialisable", str(exc), sticky=False)
        try:
            write_frame(self.channel, request)
            reply = read_frame(self.channel, self.deadline)
        except TimeoutError:
            self._fail("TIMEOUT", "the candidate ran past its time limit")
        except (ChannelClosed, OSError):
            self._fail("ERROR:CandidateExited", "the candidate process ended during a call")
        except ValueError as exc:
            self._fail("ERROR:ProtocolViolation", str(exc))
        if not isinstance(reply, dict):
            self._fail("ERROR:ProtocolViolation", "reply is not an object")
        if "raised" in reply:
            raise _rebuild_exception(reply["raised"])
        if "unserialisable" in reply:
            self._fail("ERROR:Unserialisable", str(reply["unserialisable"]), sticky=False)
        try:
            after = _by_position_and_name(reply["args"], reply["kwargs"])
            changed = [key for key in before if after[key] != before[key]]
            value = decode(reply["value"])
            updates = {key: decode(after[key]) for key in changed}
        except (KeyError, ValueError, TypeError, AttributeError) as exc:
            self._fail("ERROR:ProtocolViolation", f"malformed reply: {exc!r}")
        if any(not _can_write_back(targets[key]) for key in changed):
            self._fail(
                "ERROR:Unserialisable",
                "the candidate changed an argument in a way that cannot be copied back"
                " (a container nested in it, or one the test may also hold elsewhere)",
                sticky=False,
            )
        for key, updated in updates.items():
            write_back(targets[key], updated)
        return value

    def _fail(self, outcome: str, detail: str, *, sticky: bool = True) -> NoReturn:
        self.last_fault = (outcome, detail)
        if sticky:
            self.fault = outcome
        raise _Fault(outcome, detail)

    def run(self, job: dict[str, Any]) -> dict[str, Any]:
        try:
            hello = read_frame(self.channel, self.deadline)
        except TimeoutError:
            return _report("timeout", "timeout", "the candidate did not finish loading in time")
        except (ChannelClosed, OSError):
            return _report("error", "candidate_exited", "the candidate exited while loading")
        except ValueError as exc:
            return _report("error", "protocol_violation", str(exc))
        if not isinstance(hello, dict) or "loaded" not in hello:
            return _report("error", "protocol_violation", "the candidate's greeting is malformed")
        if not hello.get("loaded"):
            kind = str(hello.get("type"))
            reason = "missing_entry_point" if kind == "MissingEntryPoint" else "load_error"
            return _report("error", reason, f"{kind}: {hello.get('message', '')}"[:2000])
        namespace: dict[str, Any] = {"__name__": "__judge__"}
        try:
            exec(compile(job["setup"], "<setup>", "exec"), namespace)
        except BaseException as exc:
            return _report("error", "setup_error", f"the spec's setup raised {exc!r}"[:2000])
        offered = hello.get("functions")
        bound = offered if isinstance(offered, list) else []
        for name in _names_to_bind(offered, job, namespace):
            namespace[name] = self._proxy(name)
        tests = [self._run_test(test, namespace) for test in job["tests"]]
        alias = hello.get("alias")
        if not (isinstance(alias, str) and alias.isidentifier() and alias in bound):
            alias = None  # the candidate's word; kept only when it names a real function
        report = _report(*_status_of(tests), alias=alias)
        report["tests"] = tests
        return report

    def _fault_during_test(self) -> tuple[str, str] | None:
        return self.last_fault

    def _proxy(self, name: str) -> Any:
        def proxy(*args: Any, **kwargs: Any) -> Any:
            return self.call(name, args, kwargs)

        proxy.__name__ = proxy.__qualname__ = name
        return proxy

    def _run_test(self, test: str, namespace: dict[str, Any]) -> dict[str, str]:
        if self.fault:
            return {
                "test": test,
                "outcome": self.fault,
                "detail": "not run: an earlier test ended the candidate",
            }
        self.last_fault = None
        try:
            exec(compile(test, "<test>", "exec"), namespace)
        except _Fault:
            pass
        except AssertionError as exc:
            return {"test": test, "outcome": "FAIL", "detail": str(exc)[:500]}
        except BaseException as exc:
            return {
                "test": test,
                "outcome": f"ERROR:{type(exc).__name__}",
                "detail": str(exc)[:500],
            }
        # A fault caught by the test itself (``except BaseException``) still decides the outcome.
        fault = self._fault_during_test()
        if fault is not None:
            outcome, detail = fault
            return {"test": test, "outcome": outcome, "detail": detail[:500]}
        return {"test": test, "outcome": "pass", "detail": ""}


def _names_to_bind(offered: Any, job: dict[str, Any], namespace: dict[str, Any]) -> list[str]:
    """The entry point, plus candidate functions the tests name that nothing else defines.

    The list comes from the candidate, so it is never trusted to shadow a builtin (a proxy named
    ``abs`` or ``len`` would let the candidate answer the judge's own arithmetic).
    """
    referenced = {
        node.id
        for test in job["tests"]
        for node in ast.walk(ast.parse(test))
        if isinstance(node, ast.Name)
    }
    names = [job["entry_point"]]
    for name in offered if isinstance(offered, list) else []:
        if (
            isinstance(name, str)
            and name in referenced
            and name not in namespace
            and not hasattr(builtins, name)
            and name not in names
        ):
            names.append(name)
    return names


def _status_of(tests: list[dict[str, str]]) -> tuple[str, str, str]:
    outcomes = [t["outcome"] for t in tests]
    if not outcomes:
        return "unverifiable", "no_tests", "no tests to run"
    if all(o == "pass" for o in outcomes):
        return "verified", "passed", f"all {len(outcomes)} tests passed"
    if "TIMEOUT" in outcomes:
        return "timeout", "timeout", "the candidate ran past its time limit"
    if "ERROR:CandidateExited" in outcomes:
        return "error", "candidate_exited", "the candidate process ended during a test"
    if "ERROR:ProtocolViolation" in outcomes:
        return "error", "protocol_violation", "the candidate broke the call protocol"
    judged_fail = [o for o in outcomes if o not in ("pass", "ERROR:Unserialisable")]
    failed = f"{len(judged_fail)} of {len(outcomes)} tests failed"
    if judged_fail:
        return "failed", "tests_failed", failed
    return "unverifiable", "unserialisable", "a value could not cross the sandbox boundary"


def _report(status: str, reason: str, message: str, alias: Any = None) -> dict[str, Any]:
    return {"status": status, "reason": reason, "message": message, "alias": alias, "tests": []}


# ---------------------------------------------------------------- privilege drop


def _become(uid: int, limits: dict[str, int], oom_score_adj: int) -> None:
    """Drop to ``uid`` for good, with rlimits; after this no capability is left."""
    import resource

    try:
        with open("/proc/self/oom_score_adj", "w") as handle:
            handle.write(str(oom_score_adj))
    except OSError:
        pass
    for name, value in (
        ("RLIMIT_AS", limits["memory_bytes"]),
        ("RLIMIT_NPROC", limits["processes"]),
        ("RLIMIT_FSIZE", limits["file_bytes"]),
        ("RLIMIT_CPU", limits["cpu_seconds"]),
        ("RLIMIT_NOFILE", 64),
        ("RLIMIT_CORE", 0),
    ):
        resource.setrlimit(getattr(resource, name), (value, value))
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)
    os.environ.clear()
    os.environ.update(
        {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
    )
    os.chdir("/tmp")


def _keep_only_fds(*keep: int) -> None:
    """Point 0-2 at /dev/null unless kept, and close every other descriptor but ``keep``.

    Open descriptors are listed from /proc/self/fd: closing all 65,536 possible ones one by one
    cost about a millisecond per process, which was a fifth of a job.
    """
    null = os.open(os.devnull, os.O_RDWR)
    for std in (0, 1, 2):
        if std not in keep:
            os.dup2(null, std)
    os.close(null)
    for name in os.listdir("/proc/self/fd"):
        fd = int(name)
        if fd > 2 and fd not in keep:
            with contextlib.suppress(OSError):  # includes the listing's own, already closed
                os.close(fd)


# ---------------------------------------------------------------- zygote


def zygote_main(control: socket.socket) -> None:
    """Fork candidates on request. Forked before any job, so it never held a test."""
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children are reaped by the kernel
    # Warm the modules candidates import most, so each fork starts with them loaded.
    for module in (
        "typing",
        "math",
        "itertools",
        "functools",
        "heapq",
        "bisect",
        "string",
        "datetime",
    ):
        __import__(module)
    while True:
        try:
            header, fds, _flags, _addr = socket.recv_fds(control, _HEADER.size, 3)
        except OSError:
            os._exit(0)
        if len(header) < _HEADER.size:
            os._exit(0)
        (size,) = _HEADER.unpack(header)
        payload = b""
        while len(payload) < size:
            chunk = control.recv(size - len(payload))
            if not chunk:
                os._exit(0)
            payload += chunk
        request = json.loads(payload)
        pid = os.fork()
        if pid == 0:
            channel, out, err = fds
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.dup2(out, 1)
            os.dup2(err, 2)
            _keep_only_fds(1, 2, channel)
            try:
                _become(request["uid"], request["limits"], 1000)
                sys.stdout = open(1, "w", buffering=1, closefd=False)  # noqa: SIM115
                sys.stderr = open(2, "w", buffering=1, closefd=False)  # noqa: SIM115
                candidate_serve(channel, request["code"], request["entry_point"])
            finally:
                os._exit(0)
        for fd in fds:
            os.close(fd)
        control.sendall(_HEADER.pack(pid))


# ---------------------------------------------------------------- supervisor


def _processes_of(uid: int) -> tuple[int, int]:
    """How many processes run under ``uid``: (alive, zombies waiting to be reaped)."""
    alive = zombies = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        fields: dict[str, str] = {}
        try:
            with open(f"/proc/{entry}/status") as handle:
                for line in handle:
                    key, _, value = line.partition(":")
                    if key in ("State", "Uid"):
                        fields[key] = value.split()[0]
        except (OSError, IndexError):
            continue
        if fields.get("Uid") == str(uid):
            if fields.get("State") == "Z":
                zombies += 1
            else:
                alive += 1
    return alive, zombies


# /proc/sysvipc/<kind>: the id, owner uid and creator uid columns of each kind of object.
_SYSV_COLUMNS = {"shm": (1, 7, 9), "sem": (1, 4, 6), "msg": (1, 7, 9)}


def _ipc_objects_of(uid: int) -> list[tuple[str, int]]:
    """System V shared memory, semaphores and queues owned or created by ``uid``.

    They outlive their creator inside the container's IPC namespace, so a job could otherwise
    leave memory charged to the container or data for a later job.
    """
    found = []
    for kind, (ident, owner, creator) in _SYSV_COLUMNS.items():
        try:
            with open(f"/proc/sysvipc/{kind}") as handle:
                rows = [line.split() for line in handle.readlines()[1:]]
        except OSError:
            continue
        found += [(kind, int(row[ident])) for row in rows if str(uid) in (row[owner], row[creator])]
    return found


def _remove_ipc_objects(uid: int) -> None:
    """As their owner or creator: IPC_RMID (0) on every System V object of ``uid``."""
    import ctypes

    libc = ctypes.CDLL(None)
    remove = {
        "shm": lambda ident: libc.shmctl(ident, 0, None),
        "sem": lambda ident: libc.semctl(ident, 0, 0),
        "msg": lambda ident: libc.msgctl(ident, 0, None),
    }
    for kind, ident in _ipc_objects_of(uid):
        remove[kind](ident)


def _owned_files(uid: int) -> bool:
    for folder in ("/tmp", "/dev/shm"):
        try:
            entries = os.listdir(folder)
        except OSError:
            continue
        for name in entries:
            try:
                if os.lstat(os.path.join(folder, name)).st_uid == uid:
                    return True
            except OSError:
                continue
    return False


def _allow_and_retry(function: Any, path: str, _error: Any) -> None:
    """rmtree's error hook: the owner may have removed its own write or search permission."""
    with contextlib.suppress(OSError):
        os.chmod(os.path.dirname(path), 0o700)
        os.chmod(path, 0o700)
        function(path)


def _reap_as(uid: int) -> None:
    """As ``uid``: SIGKILL all it runs (``kill(-1)`` spares only the caller), delete its files
    and its System V IPC objects."""
    import shutil

    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
            for _ in range(100):
                try:
                    os.kill(-1, signal.SIGKILL)
                except ProcessLookupError:
                    break
            for folder in ("/tmp", "/dev/shm"):
                for name in os.listdir(folder) if os.path.isdir(folder) else []:
                    path = os.path.join(folder, name)
                    try:
                        if os.lstat(path).st_uid != uid:
                            continue
                        if os.path.isdir(path) and not os.path.islink(path):
                            shutil.rmtree(path, onerror=_allow_and_retry)
                        else:
                            os.unlink(path)
                    except OSError:
                        continue
            _remove_ipc_objects(uid)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


class Supervisor:
    def __init__(self, config: dict[str, Any], zygote: socket.socket, zygote_pid: int) -> None:
        self.config = config
        self.zygote = zygote
        self.zygote_pid = zygote_pid
        self.serial = 0

    def run_job(self, job: dict[str, Any]) -> dict[str, Any]:
        started = time.monotonic()
        timeout = float(job.get("timeout_s", self.config["timeout_s"]))
        deadline = started + timeout
        self.serial += 1
        candidate_uid = self.config["uid_base"] + 2 * self.serial
        judge_uid = candidate_uid + 1
        limits = self.config["limits"]
        judge_end, candidate_end = socket.socketpair()
        outputs = [
            _private_file(f"/tmp/.guardrail-{name}-{self.serial}") for name in ("out", "err")
        ]
        request = json.dumps(
            {
                "uid": candidate_uid,
                "limits": limits,
                "code": job["code"],
                "entry_point": job["entry_point"],
            }
        ).encode()
        socket.send_fds(
            self.zygote, [_HEADER.pack(len(request))], [candidate_end.fileno(), *outputs]
        )
        self.zygote.sendall(request)
        candidate_end.close()  # the zygote holds its own reference since the send
        report_r, report_w = os.pipe()
        judge_pid = os.fork()
        if judge_pid == 0:
            try:
                _keep_only_fds(judge_end.fileno(), report_w)
                _become(judge_uid, limits, 500)
                report = Judge(judge_end.fileno(), deadline).run(job)
                write_frame(report_w, report)
            finally:
                os._exit(0)
        os.close(report_w)
        judge_end.close()
        # Read only now, so that the zygote's fork and the judge's fork overlap.
        (candidate_pid,) = _HEADER.unpack(read_exact(self.zygote.fileno(), _HEADER.size))
        candidate_gone = _exit_watch(candidate_pid)
        try:
            report = read_frame(report_r, deadline + 1.0)
        except TimeoutError:
            report = _report("timeout", "timeout", "the job ran past its time limit")
        except (ChannelClosed, ValueError, OSError):
            report = _report("error", "sandbox_fault", "the judge ended without a report")
        os.close(report_r)
        report["cpu_s"] = _cpu_seconds(candidate_pid)  # read before the kill: it tells a
        for pid in (candidate_pid, judge_pid):  # busy loop from a starved process
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        os.waitpid(judge_pid, 0)
        if candidate_gone is not None:  # wake the moment the candidate is gone, not by polling
            select.select([candidate_gone], [], [], 0.1)
            os.close(candidate_gone)
        self._cleanup(candidate_uid)
        self._cleanup(judge_uid)
        report["stdout"], report["stderr"] = (
            _read_output(fd, limits["output_chars"]) for fd in outputs
        )
        for fd in outputs:
            os.close(fd)
        report["duration_s"] = round(time.monotonic() - started, 6)
        return report

    def _cleanup(self, uid: int) -> None:
        """Leave nothing of ``uid`` behind: no process (not even a zombie), no file."""
        for attempt in range(2000):
            self._reap_orphans()
            alive, zombies = _processes_of(uid)
            files = _owned_files(uid) or bool(_ipc_objects_of(uid))
            if not (alive or zombies or files):
                return
            # The job's own processes were SIGKILLed already and vanish within a few polls;
            # only what survives that (a fork bomb, a setsid daemon, files) needs the reaper.
            if files or (alive and attempt >= 10):
                _reap_as(uid)
            else:
                time.sleep(0.0005)
        raise SystemExit(f"could not clean up after uid {uid}")  # the host recycles us

    def _reap_orphans(self) -> None:
        while True:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.zygote_pid:
                raise SystemExit("the zygote died")


def _exit_watch(pid: int) -> int | None:
    """A pidfd that becomes readable when ``pid`` exits (None if it is gone already)."""
    try:
        return os.pidfd_open(pid)
    except OSError:
        return None


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of ``pid`` so far (``/proc/<pid>/stat`` is world-readable)."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            fields = handle.read().rpartition(")")[2].split()
    except OSError:
        return None
    # Fields after the command name: state is index 0, utime 11, stime 12 (proc(5) 3, 14, 15).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _private_file(path: str) -> int:
    """A file only this process can open (root, 0600), unlinked at once; its fd is passed on."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    os.unlink(path)
    return fd


def _read_output(fd: int, limit: int) -> str:
    data = os.pread(fd, limit * 4 + 4, 0)
    text = data.decode("utf-8", "replace")
    if len(text) > limit or os.fstat(fd).st_size > len(data):
        return text[:limit] + "\n[... output truncated]"
    return text


def supervisor_main() -> None:
    """Entry point inside the container: read a config frame, fork the zygote, serve batches."""
    os.umask(0o077)
    stdin, stdout = sys.stdin.fileno(), os.dup(sys.stdout.fileno())
    config = read_frame(stdin)
    parent_end, zygote_end = socket.socketpair()
    zygote_pid = os.fork()
    if zygote_pid == 0:
        parent_end.close()
        _keep_only_fds(zygote_end.fileno())
        zygote_main(zygote_end)
        os._exit(0)
    zygote_end.close()
    # Nothing this process starts may inherit the channel to the host.
    os.set_inheritable(stdout, False)
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 1)
    os.dup2(null, 2)
    supervisor = Supervisor(config, parent_end, zygote_pid)
    write_frame(stdout, {"ready": True, "protocol": PROTOCOL, "python": sys.version.split()[0]})
    while True:
        try:
            batch = read_frame(stdin)
        except ChannelClosed:
            return
        for index, job in enumerate(batch["jobs"]):
            write_frame(stdout, {"job": index, "report": supervisor.run_job(job)})
