"""The runner package as one archive, and the bootstrap that starts it in a container.

The archive is a deterministic zip (sorted names, fixed timestamps, stored uncompressed) of the
package's ``.py`` files, built in memory; its sha256 is the runner version (part of every cache
key and container label), so any change to any runner module invalidates cached verdicts.
"""

from __future__ import annotations

import hashlib
import io
import zipfile
from pathlib import Path

from guardrail.sandbox import runner

__all__ = [
    "BOOTSTRAP",
    "INTERPRETER_FLAGS",
    "LOADER",
    "RUNNER_ARCHIVE",
    "RUNNER_VERSION",
    "build_archive",
]

_EPOCH = (1980, 1, 1, 0, 0, 0)  # the earliest time a zip can record
# Every interpreter a sandbox container starts: isolated (no environment variables, no script
# folder on the path) and without ``site`` (no site directories, ``.pth`` files or
# ``sitecustomize``: the image's packages never run before the privilege drop).
INTERPRETER_FLAGS = ("-I", "-S")


def build_archive(package: Path) -> bytes:
    """The package's modules as zip bytes that depend on nothing but their names and text."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        for path in sorted(package.glob("*.py")):
            info = zipfile.ZipInfo(path.name, date_time=_EPOCH)
            info.external_attr = 0o644 << 16
            archive.writestr(info, path.read_bytes())
    return buffer.getvalue()


RUNNER_ARCHIVE = build_archive(Path(runner.__file__).parent)
RUNNER_VERSION = hashlib.sha256(RUNNER_ARCHIVE).hexdigest()[:16]

# Reads the archive from stdin (exact length, unbuffered so no frame is swallowed), hands its
# sources to `runner.boot`, which imports the package from memory and runs the supervisor. Kept
# tiny: everything else travels as data. The members are read from their local headers (stored,
# sizes in the header: `build_archive` writes nothing else) rather than with ``zipfile``, which
# would load 45 modules into every process of the container.
LOADER = (
    "import os,struct\n"
    "def r(n):\n"
    " b=b''\n"
    " while len(b)<n:\n"
    "  c=os.read(0,n-len(b))\n"
    "  if not c: raise SystemExit(3)\n"
    "  b+=c\n"
    " return b\n"
    "a=r(int(r(10)));s={};i=0\n"
    "while a[i:i+4]==b'PK\\3\\4':\n"
    " z,_,n,e=struct.unpack_from('<IIHH',a,i+18);i+=30+n+e\n"
    " s[a[i-n-e:i-e].decode()]=a[i:i+z].decode();i+=z\n"
    "g={'__name__':'guardrail_runner_boot'}\n"
    "exec(compile(s['boot.py'],'guardrail_runner/boot.py','exec'),g)\n"
    "g['start'](s)\n"
)


def without_environment(code: str) -> str:
    """``code`` run by an interpreter that first replaces itself with one that has no
    environment at all.

    PID 1's initial environment block (what the engine set: HOSTNAME, HOME, PATH) is what
    /proc/1/environ shows, and gVisor shows it to every uid; clearing ``os.environ`` leaves it.
    Descriptors 0-2 pass through the exec, and nothing has been read from stdin before it.
    Both interpreters run with ``-I -S`` (`INTERPRETER_FLAGS`): no ``site``, so no code of the
    image's packages runs in them (``runner.boot``).
    """
    flags = ",".join(map(repr, INTERPRETER_FLAGS))
    return f"import os,sys\nos.execve(sys.executable,[sys.executable,{flags},'-c',{code!r}],{{}})\n"


BOOTSTRAP = without_environment(LOADER)
