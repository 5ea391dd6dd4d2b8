import os

# Leave files behind in a folder the owner itself can no longer write to.
os.makedirs("/tmp/trap/inner", exist_ok=True)
for name in ("a", "b"):
    with open(f"/tmp/trap/inner/{name}", "w") as handle:
        handle.write("left behind")
os.chmod("/tmp/trap/inner", 0o500)
os.chmod("/tmp/trap", 0o500)


def square(x):
    return -1
