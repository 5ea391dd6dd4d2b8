"""The in-container runner: a supervisor, a zygote, a judge and a candidate. Standard library only.

This package is sent to each long-lived sandbox container at start-up as one archive
(`guardrail.sandbox.shipping`) and runs there as PID 1 (``python3 -I -S``), loaded from memory by
`boot`. The host imports `framing`, `codec` and `static` directly. Modules, one job each: `framing`
(wire format), `codec` (plain data), `static` (source checks), `exceptions` (raised on one side,
rebuilt on the other), `identity` (what copies would hide), `loader` (the candidate's code, alone
or inside its shipped module), `candidate` (load and serve), `handles` (the candidate's side of the
channel: the request server), `references` (its handles, and what the judge's references become
there), `object_table` (numbering objects that cross by reference), `stubs` (the test's objects as
the candidate sees them: callbacks), `printed` (what the candidate printed, kept for the judge),
`remote` (the judge's proxies of candidate objects, and the tests' names), `judge_objects` (the
judge's objects the candidate holds), `showing` (the text a doctest example shows of a candidate
object), `signatures` (a test's function as the candidate sees it), `copies` (a test's iterator
over plain data, sent as a copy), `mirrors` (the candidate's mutable module globals, one copy each
in the judge, kept in step), `calls` (the judge's side of the channel), `replies` (how the judge
reads a reply), `served` (callbacks the judge runs for the candidate, and draining its iterators),
`judge`, `returned` (what the call a failing assert checked gave, recorded by the judge),
`doctesting` (a doctest example, run in the judge), `example_classes` (which of its
classes the candidate defines), `checker` (doctest's output checker, mirrored), `privilege` (uid
and rlimits), `seccomp` (the IPC filter), `zygote`, `cleanup`, `erase` (unbreakable deletes),
`supervisor`, `boot`. `retrieved`'s checks of a judged class's reads are `method_reads`.
Also `distributions` (the shipped package's distribution name and version, for
``importlib.metadata``). What crosses back as in-process: parts of a call's arguments in its
result are the test's own objects (``{"argpart": n}``, `identity`), a test's callback's changes
to the candidate's arguments reach the candidate's objects (`served`), and attributes the
candidate sets on a test's function are set on the test's (never a dunder name, `stubs`).

What it defends against (the candidate is hostile; the tests and this package are trusted):

* forging the verdict: only the judge writes the report, on a pipe no candidate holds; the
  candidate's exit code and output are never read as a verdict; a candidate that exits, raises
  ``SystemExit``, patches builtins or prints markers only changes its own process;
* cheating the comparison: arguments and return values cross as plain data (exact builtin types,
  no pickle) and every comparison happens in the judge; anything else (a generator, an object
  with a forged ``__eq__``) stays in the candidate and crosses as a handle the judge can iterate,
  call and read attributes of, but which never decides an equality, hash, truth value or text
  (asked to, the test becomes ``ERROR:Unserialisable``), save the one text doctest itself
  compares: what a doctest example shows or prints of it, which is never accepted when it reads
  as plain data (`showing`); the test's own callables cross as
  callbacks the candidate can only call or iterate, never inspect (a lambda holds the test's
  constants);
* reading the tests (save a doctest example's ``class`` statement that hands itself to the
  module's code or holds data only, which runs in the candidate's process, `example_classes`)
  or a neighbour's code: the candidate is forked from a zygote that never
  holds anything of any job (it receives only a uid and three descriptors; freed memory keeps
  what a process once held, and every fork inherits it), gets its own code as the first frame
  of its own channel, runs under its own fresh unprivileged uid (so
  ``/proc/<judge>/{environ,fd,mem}`` are closed to it), with an empty environment; PID 1's
  own initial environment is empty too (the bootstrap re-execs the interpreter without one),
  as gVisor shows ``/proc/1/environ`` to every uid;
* spoiling other jobs: fresh uids per job, everything left under them killed and their files
  removed after the job, rlimits per process (memory, processes, file size, CPU), a wall-clock
  deadline enforced by the judge and again by the supervisor.

What can outlive a job's processes, and how each is closed (``sandbox check`` probes each)::

    processes, zombies, setsid daemons   every process of the job's uids SIGKILLed, then waited for
    files, FIFOs, unix sockets, trees    /tmp and /dev/mqueue are the only places a job uid can
                                         write; everything it owns there is deleted (`erase`)
    POSIX message queues                 mq_* refused (errno 3002) by the runner's seccomp filter;
                                         under runc also RLIMIT_MSGQUEUE 0, /dev/mqueue swept
    POSIX shared memory (/dev/shm)       absent: the container has a private IPC namespace
    System V shm, semaphores, queues     refused (errno 3001) by the filter; private IPC namespace;
                                         under runc the job's objects are also removed
    abstract unix sockets                die with the last process holding them (probed)
    kernel keyrings (add_key, keyctl)    refused by the engine's seccomp profile and the filter
    file locks, POSIX timers, memfd,     die with their process or file
    eventfd, inotify, pipes
    data in freed memory                 nothing of a job enters a process that forks others

The filter (`seccomp`) is installed in every candidate and judge after the drop to the job's
uid and before any job code runs; gVisor has neither /proc/sysvipc nor /dev/mqueue to sweep and
refuses RLIMIT_MSGQUEUE, so there it is the only thing that closes them: a job runs only with
the filter, or (runc) with the rlimit and /proc/sysvipc, never with neither (`sandbox_fault`).
Its cost to candidates and tests: System V IPC and POSIX queues fail with OSError 3001/3002, so
``multiprocessing`` queues and locks, ``sem_open`` and the ``sysv_ipc``/``posix_ipc`` modules
do not work in the sandbox (they needed /dev/shm, absent already, or outlive the job).
A test that meets the filter's errno is ``refused_facility`` (`seccomp.refused_facility`),
never ``failed``: correct code is not blamed for the sandbox's refusal.

No code of the image's packages runs in the supervisor, the zygote, the judge or the reaper:
PID 1 is ``python3 -I -S`` with the standard library's directories as its ``sys.path`` and
refuses to start beside anything else (`boot`); a candidate adds the site directories for itself
after the drop (`zygote`), and the tests' imports of packages the standard library lacks are the
candidate's, seen as remote modules (`judge`).

What it does not defend against: kernel exploits and side channels (the container and the host's
seccomp/AppArmor profile are the next layers), and hostile *tests*.

With module context the candidate's module (from the indexed tree, as hostile as the text) runs in
the candidate process, and `retrieved` decides what is judged: the candidate compiles the module
before any of its code runs, takes the runner out of ``sys.modules`` and ``sys.meta_path``, holds
its checks in closures and locals, and checks before and after every operation of the tests that
the tested name still holds the definition's own function (its code object, globals, builtins,
defaults), that no trace or profile function is set, that a wrapper ran the definition, and by the
end that the tests ran it at all; the judge compares the fingerprints of its own compile (compile
only, `fingerprints`) at the greeting and after the last test; `retrieved_text` reads what the text
itself writes (its literal defaults, whether it decorates the definition: then what the decorator
makes is a wrapper each call of which must run the definition, ``@curry``). A failure is
``missing_context``. So ``verified`` in context means "this text, bound under the tested name in
its module, passed". Not defended: a module written against the runner can reach its objects
through frames, ``gc`` or ``ctypes``, or answer on the channel itself, and forge any reply; a
decorator, helper or base class the text uses is judged with it; a test that reaches it through
another name (a re-export) calls what that name holds, and one operation of the job running the
definition is enough; what another thread or a signal handler does to a call while it runs (a swap
undone in time; on 3.13+, frame writes) is not seen.
A judged method (or a judged class's methods) is also checked where the tests read it
(`method_reads`): each read of its name through an instance or the class yields, as Python
resolves it, the class's own entry (the function, or a method bound to its ``__func__``); an
instance ``__dict__`` that shadows it, or a ``__getattribute__``/``__getattr__`` of the class or
its metaclass the text does not write, is ``missing_context``. Reads the candidate's own code
makes (``self.other()`` inside a method) are not the tests' and are not checked.

Process tree inside the container::

    supervisor (uid 0, caps SETUID/SETGID/KILL only)  <- frames on stdin/stdout from the host
    ├── zygote (uid 0; forked before any job, never holds job data)
    │   └── candidate (uid base+2n)    reads its code from its channel, answers the judge's calls
    ├── judge (uid base+2n+1)          runs setup + tests, calls into the candidate, writes report
    └── reaper (uid of the job)        kill(-1) and file cleanup as that uid after the job
"""
