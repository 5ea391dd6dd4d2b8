"""Doctest examples in a docstring, turned into the tests of a `Spec`, run as doctest runs them.

Each example, read with the standard library's `doctest.DocTestParser`, becomes one test, in the
docstring's order: ``__doctest_example__(source, want, options=..., raises=...)``. The judge runs
a spec's tests in order in one namespace, as a doctest session shares its globals, and
`guardrail.sandbox.runner.doctesting` runs each example as doctest does: a bare expression shows
its repr, what it prints is output, the expected text is compared with doctest's checker and the
example's directives (``+ELLIPSIS``, ``+NORMALIZE_WHITESPACE``, ``+IGNORE_EXCEPTION_DETAIL``...),
an expected exception by its last traceback line. So ``>>> it = chunked(xs, 2)`` then
``>>> next(it)`` keeps its state, and a failing example 3 is reported while 4 and 5 still run.
An example with no output is a test too: doctest fails one that raises. ``>>> import m`` is setup.

Examples are skipped, never guessed at, each counted under a reason (`REASONS`): ``+SKIP``; a
source that does not compile; an expected exception that is not an `Exception` (``SystemExit``);
introspection whose answer differs between the real function and the judge's reference to it
(``f.__name__``, ``help(f)``, a ``<function ...>`` repr, the module's ``__file__``); examples that
read a name only a skipped example bound. Output no run can match (a memory address; a set of
strings, whose order changes with every process) is not compared, but the example still runs:
later examples may need what it binds. An example that sets process state (a random seed, the
environment, the working directory) is skipped with every example after it, which may depend on
that state: the judge's process is not the candidate's. The examples before it stay tests.
So is one none of whose examples exercises the function: at least one must call it, by its name
or a module alias of it (``parse_td = parse_timedelta``; a method:
reach it, `guardrail.reach`: ``p.peek()``, the class called for ``__init__``; a module function
a class installs as a method, ``__delitem__ = _view_delitem``: reach that method, ``del v[0]``),
or ``callable(f)`` would pass for any code. Names the examples read
from the function's module (its helpers) are the judge's to resolve.
"""

from __future__ import annotations

import ast
import builtins
import doctest
import functools
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field

from guardrail.reach import method_reached
from guardrail.sandbox.runner.doctesting import FLAGS

__all__ = ["MAX_EXAMPLES", "REASONS", "DoctestTests", "doctest_tests"]

MAX_EXAMPLES = 1000
"""Most examples one docstring may have; one with more gets no tests (`REASONS`), in linear time."""

REASONS = {
    "skip_directive": "marked `# doctest: +SKIP`",
    "does_not_compile": "its source does not compile",
    "not_an_exception": "it expects an exception that is not an `Exception` (`SystemExit`)",
    "introspection": "it inspects the function or its module (`f.__name__`, `__file__`, `help(f)`)",
    "depends_on_skipped": "it reads a name only a skipped example binds",
    "process_state": "it or an earlier example sets process state (a random seed, the"
    " environment, the directory) that the judge's process does not share with the candidate's",
    "never_calls": "no example of the docstring calls the function",
    "too_many_examples": f"the docstring has more than {MAX_EXAMPLES:,} examples",
    "unencodable": "the docstring's setup holds a lone surrogate (``\\udc80``) no store can hold",
}
"""Why an example was skipped, by the reason word `DoctestTests.reasons` counts."""

_FLAG_NAMES = {value: name for name, value in doctest.OPTIONFLAGS_BY_NAME.items()}
_INTROSPECTION_CALLS = frozenset({"help", "dir", "vars", "id", "globals", "locals"})
_PASSING_ONLY = frozenset({"callable", "type", "isinstance", "issubclass", "hasattr", "getattr"})
_PROCESS_STATE_CALLS = frozenset({"seed", "chdir", "putenv", "unsetenv", "setlocale", "umask"})
_SURROGATE = re.compile("[\ud800-\udfff]")
_ADDRESS = re.compile(r" at 0x[0-9A-Fa-f]+")
_OBJECT_REPR = re.compile(r"<(function|bound method|built-in function|method) '?([\w.]*)")
_STABLE_REPRS = frozenset({"built-in function", "method"})  # C code: the same in every process


@dataclass(frozen=True)
class DoctestTests:
    """Tests and setup from one docstring, and the examples skipped, counted by reason."""

    tests: list[str] = field(default_factory=list)
    setup: str = ""
    reasons: dict[str, int] = field(default_factory=dict)

    @property
    def skipped(self) -> int:
        """How many examples became neither a test nor setup."""
        return sum(self.reasons.values())


def doctest_tests(
    docstring: str,
    entry_point: str,
    qualified_name: str | None = None,
    module: ast.Module | None = None,
) -> DoctestTests:
    """The doctest examples of ``entry_point``'s docstring as tests, in order.

    ``qualified_name`` (``peekable.peek``) marks a method: its examples must reach it
    (`guardrail.reach`, reading its ``module``'s tree when given).
    """
    try:
        examples = doctest.DocTestParser().get_examples(docstring)
    except ValueError:  # inconsistent indentation and the like: not a doctest we can read
        return DoctestTests()
    if len(examples) > MAX_EXAMPLES:
        return DoctestTests(reasons={"too_many_examples": len(examples)})
    owner, _, _ = (qualified_name or entry_point).rpartition(".")
    state = _State(entry_point, owner, (qualified_name or "") if owner else "", module)
    for example in examples:
        state.take(example)
    return state.result(len(examples))


class _State:
    def __init__(
        self, entry_point: str, owner: str, method: str, module: ast.Module | None
    ) -> None:
        self.entry_point = entry_point
        # The names the examples may call it by: its own, and module aliases (``parse_td =
        # parse_timedelta``), which in its module are the same function.
        self.names = {entry_point} | (
            _aliases(module, entry_point) if module and not method else set()
        )
        self.owner = owner
        self.method = method  # ``peekable.peek`` for a method, else ""
        # A module function its classes install as a method (``__delitem__ = _view_delitem``)
        # runs where that method is reached (``del view[0]``).
        self.installed = _installed(module, entry_point) if module and not method else set()
        self.trees: list[ast.Module] = []  # the examples so far (a method is reached across them)
        self.module = module
        self.module_names = set(_module_bindings(module)) if module else set()
        self.imported: set[str] = set()
        self.unavailable: set[str] = set()  # names only skipped examples bind
        self.setup: list[str] = []
        self.tests: list[str] = []
        self.reasons: Counter[str] = Counter()
        self.called = False  # an example so far calls the function
        self.exercised = False  # ... and one at or after it is compared
        self.sets_process_state = False  # an example so far did: it and the rest are skipped

    def result(self, examples: int) -> DoctestTests:
        """The tests of the examples taken, or none with the reason (see the module)."""
        kept = len(self.tests) + len(self.setup)
        setup = "\n".join(self.setup)
        if _SURROGATE.search(setup):  # tests are reprs (escaped); setup is the examples' own text
            return DoctestTests(reasons={"unencodable": examples})
        if kept and not self.exercised:
            return DoctestTests(reasons=dict(self.reasons + Counter(never_calls=kept)))
        if not self.exercised:
            return DoctestTests(reasons=dict(self.reasons))
        return DoctestTests(self.tests, setup, dict(self.reasons))

    def take(self, example: doctest.Example) -> None:
        source = example.source.removesuffix("\n")
        try:
            compile(example.source, "<doctest>", "single", 0, True)
            tree = ast.parse(example.source)
        except (SyntaxError, ValueError):
            self.reasons["does_not_compile"] += 1
            return
        self.sets_process_state |= _sets_process_state(tree)
        if self.sets_process_state:
            self.reasons["process_state"] += 1
            return
        reason = self._reason_to_skip(example, tree)
        if reason is not None:
            self.reasons[reason] += 1
            self.unavailable |= _bound(tree)
            return
        self.unavailable -= _bound(tree)
        if example.exc_msg is None and not example.want and _only_imports(tree):
            self.setup.append(source)
            self.imported |= _bound(tree)
            return
        unchecked = _unchecked(example.want) if example.exc_msg is None else ""
        self.called |= self._calls(tree)
        self.exercised |= self.called and not unchecked
        self.tests.append(_test_text(source, example, unchecked))

    def _reason_to_skip(self, example: doctest.Example, tree: ast.Module) -> str | None:
        if example.options.get(doctest.SKIP):
            return "skip_directive"
        if _names(tree) & self.unavailable:
            return "depends_on_skipped"
        if self._introspects(tree) or self._shows_own_object(example.want):
            return "introspection"
        if example.exc_msg is not None:
            name = example.exc_msg.partition(":")[0].strip().rpartition(".")[2]
            kind = getattr(builtins, name, None)
            if isinstance(kind, type) and not issubclass(kind, Exception):
                return "not_an_exception"  # the judge leaves these to propagate, unjudged
        return None

    def _shows_own_object(self, want: str) -> bool:
        """An expected ``<function f ...>`` or ``<bound method ...>``: the judge's reference to
        the module's code shows otherwise. C code (``<built-in function neg>``, ``<method 'lower'
        of 'str' objects>``) shows the same in every process unless the module binds that name
        itself (its function, or a C version it imports in its place), which without the
        module's tree is assumed."""
        for kind, name in _OBJECT_REPR.findall(want):
            if kind not in _STABLE_REPRS or self.module is None:
                return True
            if name.rpartition(".")[2] in self.names | {self.owner} | self.module_names:
                return True
        return False

    def _introspects(self, tree: ast.Module) -> bool:
        """``f.__doc__``, ``module.__name__``, ``help(f)``: the judge's reference to a function
        is not the function object (a value's own ``type(x).__name__`` is fine)."""
        objects = {self.entry_point, self.owner, *self.imported} - {""}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("__")
                and node.attr.endswith("__")
                and isinstance(node.value, ast.Name)
                and node.value.id in objects
            ):
                return True
            if isinstance(node, ast.Call) and _called_name(node) in _INTROSPECTION_CALLS:
                return True
        return bool(_module_dunders(tree))  # __file__, __name__: the judge's are not the module's

    def _calls(self, tree: ast.Module) -> bool:
        """Whether the example runs the function: calls it, decorates with it or hands it to a
        call (``callable(f)`` or ``f.__name__`` run nothing); a method: the examples so far reach
        it (`guardrail.reach`: ``p.peek()``, the class called for ``__init__``...)."""
        self.trees.append(tree)
        if self.method:
            return method_reached(self.trees, self.method, self.module)
        return any(self._runs(node) for node in ast.walk(tree)) or any(
            method_reached(self.trees, installed, self.module) for installed in self.installed
        )

    def _runs(self, node: ast.AST) -> bool:
        names = self.names
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            return any(isinstance(d, ast.Name) and d.id in names for d in node.decorator_list)
        if not isinstance(node, ast.Call):
            return False
        func = node.func
        if isinstance(func, ast.Name) and func.id in names:
            return True
        if (  # `module.function(...)`
            isinstance(func, ast.Attribute)
            and func.attr in names
            and isinstance(func.value, ast.Name)
            and func.value.id in self.imported
        ):
            return True
        return _called_name(node) not in _PASSING_ONLY and any(  # map(f, xs), key=f
            isinstance(arg, ast.Name) and arg.id in names
            for arg in [*node.args, *(k.value for k in node.keywords)]
        )


def _test_text(source: str, example: doctest.Example, unchecked: str) -> str:
    arguments = [repr(source)]
    if example.exc_msg is None and example.want and not unchecked:
        arguments.append(repr(example.want.removesuffix("\n")))
    options = " ".join(
        f"{'+' if on else '-'}{_FLAG_NAMES[flag]}"
        for flag, on in sorted(example.options.items())
        if _FLAG_NAMES.get(flag) in FLAGS
    )
    if options:
        arguments.append(f"options={options!r}")
    if example.exc_msg is not None:
        arguments.append(f"raises={example.exc_msg.removesuffix(chr(10))!r}")
    if unchecked:
        arguments.append(f"unchecked={unchecked!r}")
    return f"__doctest_example__({', '.join(arguments)})"


def _unchecked(want: str) -> str:
    """Why this expected output can never match any run's, or ``""`` when it can."""
    if _ADDRESS.search(want):
        return "a memory address"
    try:
        value = ast.parse(want.strip(), mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return ""
    strings = (
        node
        for node in ast.walk(value)
        if isinstance(node, ast.Set)
        and len(node.elts) > 1
        and any(isinstance(e, ast.Constant) and isinstance(e.value, str | bytes) for e in node.elts)
    )
    return "a set of strings, in an order that changes with every process" if any(strings) else ""


def _module_dunders(node: ast.AST) -> set[str]:
    """Dunder names read outside class bodies (in one, ``__doc__`` is the class's own)."""
    if isinstance(node, ast.ClassDef):
        return set()
    dunder = isinstance(node, ast.Name) and node.id.startswith("__") and node.id.endswith("__")
    own = {node.id} if isinstance(node, ast.Name) and dunder else set()
    return own.union(*(_module_dunders(child) for child in ast.iter_child_nodes(node)))


def _sets_process_state(tree: ast.Module) -> bool:
    """``random.seed(1)``, ``os.environ['X'] = ...``, ``os.chdir(...)``: state of the judge's
    process, which the candidate's process (where the function runs) never sees."""
    for node in ast.walk(tree):
        if _called_name(node) in _PROCESS_STATE_CALLS:
            return True
        if isinstance(node, ast.Attribute) and node.attr == "environ":
            return True  # read or written: the candidate's environment is empty and its own
    return False


def _aliases(module: ast.Module, name: str) -> set[str]:
    """Names the module binds to the function at top level (``parse_td = parse_timedelta``) and
    nowhere else: one rebound later or elsewhere would be another function at run time."""
    found = {
        target.id
        for node in module.body
        if isinstance(node, ast.Assign)
        and isinstance(node.value, ast.Name)
        and node.value.id == name
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    bindings = _module_bindings(module) if found else Counter[str]()
    return {alias for alias in found if bindings[alias] == 1}


def _installed(module: ast.Module, name: str) -> set[str]:
    """``Class.attribute`` for each top-level class body binding an attribute to the module
    function ``name`` (``__delitem__ = _view_delitem``), when the module binds ``name`` once."""
    installed = _class_installs(module).get(name, set())
    return set(installed) if installed and _module_bindings(module)[name] == 1 else set()


@functools.lru_cache(maxsize=4)
def _class_installs(module: ast.Module) -> dict[str, set[str]]:
    """Name -> ``Class.attribute`` of each class body assignment ``attribute = name`` (a
    module's docstrings are read one after another: computed once per module)."""
    found: dict[str, set[str]] = {}
    classes = [node for node in module.body if isinstance(node, ast.ClassDef)]
    for cls in classes:
        for statement in cls.body:
            if isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Name):
                for target in statement.targets:
                    if isinstance(target, ast.Name):
                        found.setdefault(statement.value.id, set()).add(f"{cls.name}.{target.id}")
    return found


@functools.lru_cache(maxsize=4)
def _module_bindings(module: ast.Module) -> Counter[str]:
    """How many places of the module bind each name (once per module, as above)."""
    return Counter(_bindings(module))


def _called_name(node: ast.AST) -> str:
    if not isinstance(node, ast.Call):
        return ""
    func = node.func
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""


def _only_imports(tree: ast.Module) -> bool:
    return bool(tree.body) and all(isinstance(n, ast.Import | ast.ImportFrom) for n in tree.body)


def _names(tree: ast.AST) -> set[str]:
    """Names the code reads."""
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load)
    }


def _bound(tree: ast.AST) -> set[str]:
    """Names the code binds (assignments, loop targets, imports, definitions)."""
    return set(_bindings(tree))


def _bindings(tree: ast.AST) -> Iterator[str]:
    """Each binding of a name in the code, once per place that binds it."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            yield node.id
        elif isinstance(node, ast.alias):
            yield (node.asname or node.name).split(".")[0]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
