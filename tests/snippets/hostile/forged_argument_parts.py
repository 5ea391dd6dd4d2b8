import json
import os
import stat
import struct

# Take over the channel and answer a call with a reference to an argument part the call was
# never given (number 1000 of a call whose argument holds one container): obeyed, the judge
# would hand the test some other object of its own. It must be a broken protocol.


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
    _send(channel, {"value": {"argpart": 1000}, "args": request["args"], "kwargs": {}})


def square(x):
    return -1
