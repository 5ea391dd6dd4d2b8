import sys

# Greet as a loaded candidate whose function list is a number, so that the judge's check of the
# alias (``alias in functions``) raises: a judge that dies without a report is a sandbox_fault,
# a verdict that blames the machine, on demand. The attack does not compute the square at all.
candidate = next(m for m in list(sys.modules.values()) if hasattr(m, "candidate_serve"))
real_write_frame = candidate.write_frame


def forged(channel, frame):
    if frame.get("loaded"):
        frame = {"loaded": True, "functions": 5, "alias": "square"}
    real_write_frame(channel, frame)


candidate.write_frame = forged


def square(x):
    return -1
