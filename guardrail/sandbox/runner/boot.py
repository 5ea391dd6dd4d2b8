"""Load the runner package from the archive's sources in memory and start the supervisor.

The container's root filesystem is read-only and /tmp is noexec, so nothing is written to disk:
a meta-path finder serves the package's modules from the dict of sources the bootstrap read.
It imports nothing beyond what the interpreter has loaded at start (``importlib.abc`` alone
pulls in 20 modules): every module loaded here is inherited by every process forked later, and
bigger processes cost CPU time in each fork, exit and copy-on-write fault of every job.
"""

from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from importlib.abc import Loader

PACKAGE = "guardrail_runner"


class MemoryImporter:
    """Finder and loader of ``guardrail_runner`` and its modules, from ``{file name: source}``."""

    def __init__(self, sources: dict[str, str]) -> None:
        self.sources = sources

    def _file_of(self, fullname: str) -> str | None:
        if fullname == PACKAGE:
            return "__init__.py"
        prefix, _, name = fullname.rpartition(".")
        file = f"{name}.py"
        return file if prefix == PACKAGE and file in self.sources else None

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> ModuleSpec | None:
        file = self._file_of(fullname)
        if file is None:
            return None
        package = file == "__init__.py"
        loader = cast("Loader", self)  # a loader by protocol (create_module, exec_module)
        spec = ModuleSpec(fullname, loader, origin=f"{PACKAGE}/{file}", is_package=package)
        if package:
            spec.submodule_search_locations = []
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        return None  # the default module object

    def exec_module(self, module: ModuleType) -> None:
        spec = module.__spec__
        assert spec is not None
        assert spec.origin is not None
        file = spec.origin.rpartition("/")[2]
        exec(compile(self.sources[file], spec.origin, "exec"), module.__dict__)


def start(sources: dict[str, str]) -> None:
    """Entry point of the bootstrap: make the package importable, then run the supervisor."""
    sys.meta_path.insert(0, MemoryImporter(sources))
    importlib.import_module(f"{PACKAGE}.supervisor").supervisor_main()
