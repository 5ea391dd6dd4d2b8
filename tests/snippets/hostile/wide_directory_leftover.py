import os
import socket

# Many entries of every kind in /tmp: files, FIFOs, bound unix sockets, symlink loops, links out
# of /tmp, 255-character names, and directories whose owner removed its own permissions.
os.chdir("/tmp")
os.mkdir("wide")
os.chdir("wide")
for i in range(3000):
    open(f"f{i}", "w").close()
for i in range(200):
    os.mkfifo(f"fifo{i}")
    os.mkdir(f"sub{i}")
    open(f"sub{i}/x", "w").close()
    os.chmod(f"sub{i}", 0o000 if i % 2 else 0o100)
for i in range(20):
    server = socket.socket(socket.AF_UNIX)
    server.bind(f"sock{i}")
os.symlink("loop_b", "loop_a")
os.symlink("loop_a", "loop_b")
os.symlink("/etc", "to_etc")
os.symlink(".", "self")
os.mkdir("n" * 255)
open(os.path.join("n" * 255, "m" * 255), "w").close()
os.chdir("/tmp")
os.chmod("wide", 0o300)  # no read: cannot be listed by its owner any more
open("/tmp/" + "z" * 255, "w").close()


def square(x):
    return -1
