import sys

# Greet as a loaded candidate whose function list is a number, so that the judge's check of the
# alias (``alias in functions``) raises: a judge that dies without a report is a sandbox_fault,
# a verdict that blames the machine, on demand. The attack does not compute the square at all.
# The runner sends its greeting through framing.pack_frame, looked up when it is sent.
framing = next(m for m in list(sys.modules.values()) if hasattr(m, "pack_frame"))
real_pack_frame = framing.pack_frame


def forged(frame):
    if isinstance(frame, dict) and frame.get("loaded"):
        frame = {"loaded": True, "functions": 5, "alias": "square"}
    return real_pack_frame(frame)


framing.pack_frame = forged


def square(x):
    return -1
