import json
import os
import stat
import struct

# Take over the channel to the judge: ask it to run judge objects it never handed over (and an
# operation callbacks do not have), then answer with a reference only the judge may send (a
# candidate global, as if the judge had asked for it). Any of them obeyed would be a leak or a
# forged value; the judge must refuse the reference as a broken protocol.


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
    for callback in ({"callback": 999, "op": "call"}, {"callback": 0, "op": "getattr"}):
        _send(channel, {**callback, "args": [], "kwargs": {}})
        _read(channel)
    _send(channel, {"value": {"global": "square"}, "args": request["args"], "kwargs": {}})


def square(x):
    return -1
