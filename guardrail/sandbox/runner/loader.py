"""Load the candidate's code in the candidate process: alone, or inside its module.

Without a context the code runs in a fresh namespace named ``__candidate__``. With one (built on
the host by `guardrail.context`), a meta-path finder serves the shipped modules from memory (the
candidate's text already substituted into its module there), so module-level imports, helpers,
constants and relative imports resolve as they do in the real package; the namespace is the
target module's ``__dict__``. This runs only in the candidate process: the judge never imports
anything from the indexed tree.

A load that cannot be judged for want of something raises `LoadRefused` with the greeting to
send: ``MissingDependency`` (a top-level module the image lacks), ``MissingContext`` (code
without a context that needs a name its module would define, a module of the candidate's own
package that was not shipped, distribution metadata neither shipped nor installed
(`distributions`), a module that would not be the one shipped, or a definition
rebound after the retrieved text so that the text would not be judged).
"""

from __future__ import annotations

import importlib
import sys
from importlib.machinery import ModuleSpec
from types import FunctionType, ModuleType
from typing import TYPE_CHECKING, Any, cast

from . import distributions

if TYPE_CHECKING:
    from importlib.abc import Loader

CANDIDATE_MODULE = "__candidate__"


class LoadRefused(Exception):
    """The candidate cannot be judged; ``greeting`` is the frame to send to the judge."""

    def __init__(self, greeting: dict[str, Any]) -> None:
        super().__init__(greeting.get("message", ""))
        self.greeting = greeting


def _refused(kind: str, message: str, name: str | None = None) -> LoadRefused:
    return LoadRefused({"type": kind, "bases": [], "message": message[:2000], "name": name})


class ShippedModules:
    """Finder and loader (by protocol, as ``boot.MemoryImporter``: importing ``importlib.abc``
    would load some 20 modules into the process) of the context's modules, from their sources.
    """

    def __init__(self, modules: dict[str, dict[str, Any]]) -> None:
        self.modules = modules

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> ModuleSpec | None:
        entry = self.modules.get(fullname)
        if entry is None:
            return None
        package = bool(entry.get("package"))
        spec = ModuleSpec(
            fullname, cast("Loader", self), origin=str(entry["file"]), is_package=package
        )
        spec.has_location = True  # __file__ names the file in the indexed tree (tracebacks)
        if package:
            spec.submodule_search_locations = []  # submodules come from this finder only
        return spec

    def create_module(self, spec: ModuleSpec) -> None:
        return None

    def exec_module(self, module: ModuleType) -> None:
        entry = self.modules[module.__name__]
        exec(compile(str(entry["source"]), str(entry["file"]), "exec"), module.__dict__)


def load(job: dict[str, Any]) -> dict[str, Any]:
    """The candidate's namespace: its globals after loading (see the module docstring).

    Raises:
        LoadRefused: the code cannot be judged for want of a dependency or of its context.
        BaseException: whatever the candidate's code raised while loading (described as today).
    """
    context = job.get("context")
    if not context:
        namespace: dict[str, Any] = {"__name__": CANDIDATE_MODULE, "__builtins__": __builtins__}
        try:
            exec(compile(str(job["code"]), "<candidate>", "exec"), namespace)
        except NameError as exc:  # a name its module would have defined (a sentinel default)
            raise _refused(
                "MissingContext",
                f"NameError: {exc} (judged on its own: the candidate came without its module)",
                exc.name,
            ) from None
        except ModuleNotFoundError as exc:
            raise _not_found(exc, {}) from None
        return namespace
    modules: dict[str, dict[str, Any]] = context["modules"]
    target = str(context["module"])
    shadowed = sorted(name for name in modules if name in sys.modules)
    if shadowed:  # the interpreter would hand back its own module, not the shipped text
        raise _refused("MissingContext", f"module {shadowed[0]!r} is loaded already")
    finder = ShippedModules(modules)
    sys.meta_path.insert(0, finder)
    distributions.install(context.get("distributions"))
    try:
        module = importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise _not_found(exc, modules) from None
    except ImportError as exc:
        if exc.name in modules or (exc.name or "").split(".")[0] in _tops(modules):
            raise _refused(
                "MissingContext", f"{type(exc).__name__}: {exc}"[:2000], exc.name
            ) from None
        raise
    _check_judged(module, context.get("judged"))
    return module.__dict__


def _tops(modules: dict[str, Any]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def _not_found(exc: ModuleNotFoundError, modules: dict[str, Any]) -> LoadRefused:
    """A module the image lacks (a dependency) or one of the package that was not shipped."""
    name = exc.name or ""
    metadata = distributions.missing_message(exc)  # a PackageNotFoundError names no module
    if metadata is not None:
        return _refused("MissingContext", metadata, name)
    if name.split(".")[0] in _tops(modules):
        return _refused(
            "MissingContext",
            f"module {name!r} of the candidate's package was not shipped with it"
            " (not reachable by its imports, or over the size cap)",
            name,
        )
    return _refused(
        "MissingDependency",
        f"the candidate's code imports module {name!r}, which the sandbox image does not have",
        name,
    )


def _check_judged(module: ModuleType, judged: Any) -> None:
    """Refuse a module that rebinds the substituted definition later (``f = _fast_f``):
    what the tests would call is then not the retrieved text."""
    if not isinstance(judged, dict):
        return
    value: Any = module
    for part in str(judged.get("name", "")).split("."):
        # Class levels by __dict__: getattr would run descriptors (a property's getter).
        value = value.__dict__.get(part) if isinstance(value, type) else getattr(value, part, None)
        if value is None:
            return  # nothing bound: the judge reports the missing name
    code = _code_of(value)
    if code is None:
        return  # an opaque object (a C function, what a custom decorator made): not provable
    origin = module.__spec__.origin if module.__spec__ is not None else None
    ranges = judged.get("lines") or []
    if code.co_filename == origin and any(a <= code.co_firstlineno <= b for a, b in ranges):
        return
    raise _refused(
        "MissingContext",
        f"the module binds {judged.get('name')!r} to something other than the retrieved"
        " definition (it is rebound after it), so the retrieved text would not be judged",
    )


def _code_of(value: Any) -> Any:
    """The code object behind a function, method, property or a ``functools.wraps`` wrapper."""
    for _ in range(20):
        if isinstance(value, staticmethod | classmethod):
            value = value.__func__
        elif isinstance(value, property):
            value = value.fget
        elif hasattr(value, "__wrapped__"):
            value = value.__wrapped__
        elif isinstance(value, FunctionType):
            return value.__code__
        else:
            return getattr(getattr(value, "__func__", None), "__code__", None)
    return None
