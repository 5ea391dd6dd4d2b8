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
(`distributions`), a module that would not be the one shipped, or a name the module binds to
something other than the retrieved definition, decided by `retrieved`).

Before any code of a context's module runs, the runner's own modules leave ``sys.modules`` and
its importer leaves ``sys.meta_path``, and everything the candidate process needs afterwards is
taken into `Loaded`: the module's code may rebind any module-level name of the runner's. (Code
judged on its own is the judged text itself: what it patches changes only its own process.)
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from importlib.machinery import ModuleSpec
from types import CodeType, ModuleType
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from . import distributions
from .fingerprints import compiled
from .retrieved import NotRetrieved, watch

if TYPE_CHECKING:
    from importlib.abc import Loader

CANDIDATE_MODULE = "__candidate__"
WITHHELD = (
    "module {!r} of the candidate's package is in the indexed tree but was not shipped with it"
    " (a link, not a regular file, or over a size cap)"
)


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

    def __init__(self, modules: dict[str, dict[str, Any]], withheld: Any = ()) -> None:
        self.modules = modules
        self.compiled: dict[str, CodeType] = {}  # a module's code compiled before the import
        # In the tree but not shipped (a link, a FIFO, too large: `guardrail.context`).
        self.withheld = frozenset(n for n in withheld if type(n) is str) if withheld else set()

    def find_spec(
        self, fullname: str, path: object = None, target: object = None
    ) -> ModuleSpec | None:
        entry = self.modules.get(fullname)
        if entry is None and fullname in self.withheld:
            # An ImportError, not ModuleNotFoundError, so that ``from . import x`` reports it
            # as it is rather than as "cannot import name"; the judge reads it by its name.
            raise ImportError(WITHHELD.format(fullname), name=fullname)
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
        code = self.compiled.pop(module.__name__, None)
        exec(code or compiled(self.modules[module.__name__]), module.__dict__)


class Loaded(NamedTuple):
    """What `load` hands the server, all of it taken before any code of the candidate's module
    ran: the namespace, and (for a judged definition in context) the checks of `retrieved`."""

    namespace: dict[str, Any]
    invoke: Callable[[Any, list[Any], dict[str, Any]], Any] | None = None
    report: Callable[[], dict[str, Any]] | None = None


def load(job: dict[str, Any]) -> Loaded:
    """The candidate's namespace: its globals after loading (see the module docstring).

    Raises:
        LoadRefused: the code cannot be judged for want of a dependency or of its context.
        BaseException: whatever the candidate's code raised while loading (described as today).
    """
    context = job.get("context")
    # Taken now: the module's code may rebind this module's names (through its frames).
    refused, not_found, loaded, not_retrieved = _refused, _not_found, Loaded, NotRetrieved
    if not context:
        namespace: dict[str, Any] = {"__name__": CANDIDATE_MODULE, "__builtins__": __builtins__}
        try:
            exec(compile(str(job["code"]), "<candidate>", "exec"), namespace)
        except NameError as exc:  # a name its module would have defined (a sentinel default)
            raise refused(
                "MissingContext",
                f"NameError: {exc} (judged on its own: the candidate came without its module)",
                exc.name,
            ) from None
        except ModuleNotFoundError as exc:
            raise not_found(exc, {}) from None
        return loaded(namespace)
    modules: dict[str, dict[str, Any]] = context["modules"]
    target = str(context["module"])
    shadowed = sorted(name for name in modules if name in sys.modules)
    if shadowed:  # the interpreter would hand back its own module, not the shipped text
        raise refused("MissingContext", f"module {shadowed[0]!r} is loaded already")
    judged = context.get("judged")
    checks = None
    finder = ShippedModules(modules, context.get("withheld"))
    if isinstance(judged, dict):  # compiled here, before any code of the package runs
        try:
            code = compiled(modules[target])
        except (SyntaxError, ValueError, MemoryError, RecursionError):
            pass  # the import raises it as the package would
        else:
            finder.compiled[target] = code
            checks = watch(code, judged, str(job.get("code", "")))
    _hide_runner()
    sys.meta_path.insert(0, finder)
    distributions.install(context.get("distributions"))
    tops = _tops(modules)
    try:
        module = importlib.import_module(target)
    except ModuleNotFoundError as exc:
        raise not_found(exc, modules) from None
    except ImportError as exc:
        if exc.name in modules or (exc.name or "").split(".")[0] in tops:
            message = f"{type(exc).__name__}: {exc}"[:2000]
            raise refused("MissingContext", message, exc.name) from None
        raise
    if checks is None:
        return loaded(module.__dict__)
    pin, invoke, report = checks
    try:
        pin(module.__dict__)
    except not_retrieved as exc:
        raise refused("MissingContext", str(exc)) from None
    return loaded(module.__dict__, invoke, report)


def _hide_runner() -> None:
    """Take the runner's modules out of ``sys.modules`` and its importer off ``sys.meta_path``:
    the candidate's code never finds them by name (``sys.modules["guardrail_runner.loader"]``,
    ``import guardrail_runner``). They live on through the references the runner holds."""
    package = __name__.rpartition(".")[0]
    for name in [n for n in sys.modules if n == package or n.startswith(f"{package}.")]:
        del sys.modules[name]
    sys.meta_path[:] = [f for f in sys.meta_path if not type(f).__module__.startswith(package)]


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
