import ctypes
import os
import threading
import time

# A child whose main thread exits while another thread runs on: /proc shows it as a zombie.
if os.fork() == 0:

    def spin():
        while True:
            time.sleep(0.05)

    threading.Thread(target=spin, daemon=False).start()
    ctypes.CDLL(None).syscall(60, 0)  # SYS_exit on x86-64: this thread only
    os._exit(0)


def square(x):
    return -1
