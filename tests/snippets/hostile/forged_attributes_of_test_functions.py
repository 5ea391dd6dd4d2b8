import json
import os
import stat
import struct

# Take over the channel and report that the candidate set ``__code__`` on a test's object (and
# on one the judge never gave it): obeyed, the judge would rewrite the test's own function. It
# must be a broken protocol, however the report is made.


def _send(fd, obj):
    data = json.dumps(obj).encode()
    os.write(fd, struct.pack(">I", len(data)) + data)


def _read(fd):
    def exact(size):
        data = b""
        while len(data) < size:
            chunk = os.read(fd, size - len(data))
            if not chunk:
                os._exit(0)
            data += chunk
        return data

    (size,) = struct.unpack(">I", exact(4))
    return json.loads(exact(size))


channel = next(
    int(name)
    for name in os.listdir("/proc/self/fd")
    if stat.S_ISSOCK(os.fstat(int(name)).st_mode)
)
_send(channel, {"loaded": True, "functions": ["square"], "alias": None})
while True:
    request = _read(channel)
    if request.get("op") != "call":  # binding the name: "no such global", so it is called
        raised = {"type": "NameError", "bases": ["NameError", "Exception"], "message": "x"}
        _send(channel, {"raised": raised})
        continue
    code = {"handle": 0, "type": "code", "of": {"handle": 1, "type": "type", "class": {}}}
    forged = [[0, "__code__", code], [999, "registered", True]]
    _send(channel, {"value": 9, "args": request["args"], "kwargs": {}, "attributes": forged})


def square(x):
    return -1
