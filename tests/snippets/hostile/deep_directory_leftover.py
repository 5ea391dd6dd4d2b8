import os

# A 3,000-level directory in /tmp, built relative to the working directory (its full path is far
# beyond PATH_MAX), each level with a long name and its permissions taken away on the way back
# up: recursive deletes hit the recursion limit, PATH_MAX or the descriptor limit.
DEPTH = 3000
NAME = "d" * 200

os.chdir("/tmp")
os.mkdir("deep")
os.chdir("deep")
for _ in range(DEPTH):
    os.mkdir(NAME)
    os.chdir(NAME)
with open("bottom", "w") as handle:
    handle.write("x")
for _ in range(DEPTH // 2):
    os.chdir("..")
    os.chmod(NAME, 0o000)


def square(x):
    return -1
