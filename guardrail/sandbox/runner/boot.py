"""Load the runner package from the archive's sources in memory and start the supervisor.

The container's root filesystem is read-only and /tmp is noexec, so nothing is written to disk:
a meta-path finder serves the package's modules from the dict of sources the bootstrap read.
It imports nothing beyond what the interpreter has loaded at start (``importlib.abc`` alone
pulls in 20 modules): every module loaded here is inherited by every process forked later, and
bigger processes cost CPU time in each fork, exit and copy-on-write fault of every job.

No code of the image's packages may run here or in anything forked from here but a candidate:
the interpreter starts with ``-I -S`` (no ``site``, so no ``.pth`` file, ``sitecustomize`` or
``usercustomize``: Debian's ``sitecustomize`` imports ``apport_python_hook`` from whatever
directory offers it), `start` sets ``sys.path`` to the standard library's directories alone,
and refuses to run the supervisor if anything else is loaded (`foreign_code`, which ``sandbox
check`` also asks in the judge). The candidate adds the image's packages for itself, after the
drop (`zygote.add_project_packages`).
"""

from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from importlib.abc import Loader

PACKAGE = "guardrail_runner"
# Modules that run at interpreter start when ``site`` does, whatever directory holds them.
STARTUP_HOOKS = frozenset({"site", "sitecustomize", "usercustomize", "apport_python_hook"})


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


def stdlib_paths() -> list[str]:
    """The standard library's places on ``sys.path`` for a POSIX build, as the interpreter
    computes them without ``site`` (zip, pure modules, extension modules); never a site
    directory, and in a virtual environment the base installation's."""
    lib = f"{sys.base_prefix}/{sys.platlibdir}"
    exec_lib = f"{sys.base_exec_prefix}/{sys.platlibdir}"
    major, minor = sys.version_info[:2]
    return [
        f"{lib}/python{major}{minor}.zip",
        f"{lib}/python{major}.{minor}",
        f"{exec_lib}/python{major}.{minor}/lib-dynload",
    ]


def foreign_code(
    modules: Mapping[str, Any] | None = None,
    flags: Any = None,
    path: Sequence[str] | None = None,
    stdlib: Sequence[str] | None = None,
) -> list[str]:
    """What is loaded, or could be imported, from outside the standard library (default: this
    process's ``sys.modules``, ``sys.flags`` and ``sys.path``); empty when nothing is.

    Outside: an interpreter started without ``-I`` or ``-S``; a ``sys.path`` entry that is not
    one of ``stdlib``; a startup hook (`STARTUP_HOOKS`) in ``modules``, wherever it came from;
    a module whose file, or a package whose ``__path__``, is not under ``stdlib``. Modules
    without a file (built-in, frozen, ``__main__`` of ``-c``, this package's, served from
    memory) are not. This sees what the process says of itself: code that ran here could hide,
    which is why nothing foreign may run in the first place (the flags and path make sure).
    """
    modules = sys.modules if modules is None else modules
    flags = sys.flags if flags is None else flags
    path = sys.path if path is None else path
    roots = tuple(stdlib_paths() if stdlib is None else stdlib)
    found = [
        f"interpreter started without {option} (sys.flags.{flag} unset)"
        for option, flag in (("-S", "no_site"), ("-I", "isolated"))
        if not getattr(flags, flag, 0)
    ]
    hooks = sorted(name for name in modules if name.partition(".")[0] in STARTUP_HOOKS)
    found += [f"startup hook {name!r} loaded" for name in hooks]
    found += [f"sys.path entry {entry!r}" for entry in path if entry not in roots]

    def outside(place: Any) -> bool:
        place = str(place)
        return not any(place == root or place.startswith(f"{root}/") for root in roots)

    for name, module in sorted(modules.items()):
        spec: Any = getattr(module, "__spec__", None)
        file = spec.origin if getattr(spec, "has_location", False) else None
        places = [file or getattr(module, "__file__", None), *(getattr(module, "__path__", ()))]
        places = [place for place in places if place is not None and outside(place)]
        if places and name not in hooks:
            found.append(f"module {name!r} from {str(places[0])!r}")
    return found


def start(sources: dict[str, str]) -> None:
    """Entry point of the bootstrap: confine imports to the standard library, make the package
    importable, then run the supervisor. Exits instead (code 1, the reason on stderr, which
    the host reports) if anything from elsewhere is loaded already."""
    sys.path[:] = stdlib_paths()
    found = foreign_code()
    if found:  # the first findings say why (the host keeps only the tail of stderr)
        more = f" and {len(found) - 3} more" if len(found) > 3 else ""
        raise SystemExit(
            f"guardrail runner: code from outside the standard library: {'; '.join(found[:3])}"
            f"{more}; refusing to start"
        )
    sys.meta_path.insert(0, MemoryImporter(sources))
    importlib.import_module(f"{PACKAGE}.supervisor").supervisor_main()
