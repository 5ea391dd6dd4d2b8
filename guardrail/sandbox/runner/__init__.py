"""The in-container runner: a supervisor, a zygote, a judge and a candidate. Standard library only.

This package is sent to each long-lived sandbox container at start-up as one archive
(`guardrail.sandbox.shipping`) and runs there as PID 1 (``python3 -I``), loaded from memory by
`boot`. The host imports `framing`, `codec` and `static` directly. Modules, one job each:
`framing` (wire format), `codec` (plain data), `static` (source checks), `candidate`, `judge`,
`privilege` (uid and rlimits), `zygote`, `cleanup`, `erase` (unbreakable deletes),
`supervisor`, `boot`.

What it defends against (the candidate is hostile; the tests and this package are trusted):

* forging the verdict: only the judge writes the report, on a pipe no candidate holds; the
  candidate's exit code and output are never read as a verdict; a candidate that exits, raises
  ``SystemExit``, patches builtins or prints markers only changes its own process;
* cheating the comparison: arguments and return values cross as plain data (exact builtin types,
  no pickle) and every comparison happens in the judge; objects with a forged ``__eq__`` cannot
  cross at all (the test becomes ``ERROR:Unserialisable``);
* reading the tests or a neighbour's code: the candidate is forked from a zygote that never
  holds anything of any job (it receives only a uid and three descriptors; freed memory keeps
  what a process once held, and every fork inherits it), gets its own code as the first frame
  of its own channel, runs under its own fresh unprivileged uid (so
  ``/proc/<judge>/{environ,fd,mem}`` are closed to it), with an empty environment;
* spoiling other jobs: fresh uids per job, everything left under them killed and their files
  removed after the job, rlimits per process (memory, processes, file size, CPU), a wall-clock
  deadline enforced by the judge and again by the supervisor.

What can outlive a job's processes, and how each is closed (``sandbox check`` probes each)::

    processes, zombies, setsid daemons   every process of the job's uids SIGKILLed, then waited for
    files, FIFOs, unix sockets, trees    /tmp and /dev/mqueue are the only places a job uid can
                                         write; everything it owns there is deleted (`erase`)
    POSIX message queues                 RLIMIT_MSGQUEUE 0 for job uids, and /dev/mqueue swept
    POSIX shared memory (/dev/shm)       absent: the container has a private IPC namespace
    System V shm, semaphores, queues     private IPC namespace; the job's objects removed
    abstract unix sockets                die with the last process holding them (probed)
    kernel keyrings (add_key, keyctl)    blocked by the engine's seccomp profile (probed)
    file locks, POSIX timers, memfd,     die with their process or file
    eventfd, inotify, pipes
    data in freed memory                 nothing of a job enters a process that forks others

What it does not defend against: kernel exploits and side channels (the container and the host's
seccomp/AppArmor profile are the next layers), and hostile *tests*.

Process tree inside the container::

    supervisor (uid 0, caps SETUID/SETGID/KILL only)  <- frames on stdin/stdout from the host
    ├── zygote (uid 0; forked before any job, never holds job data)
    │   └── candidate (uid base+2n)    reads its code from its channel, answers the judge's calls
    ├── judge (uid base+2n+1)          runs setup + tests, calls into the candidate, writes report
    └── reaper (uid of the job)        kill(-1) and file cleanup as that uid after the job
"""
