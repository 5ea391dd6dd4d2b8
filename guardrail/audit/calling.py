"""How an audit calls a near-clone, and what it does with the result before comparing it.

A member of a cluster is called by a *callee* expression the judge evaluates in the member's
module context (`Callee`): a module-level function by its name; a ``@staticmethod`` or
``@classmethod`` through its class (``Class.name``); an instance method on a fresh instance of
its own class built without arguments (``Class().name``, one instance per input, so no state
carries from one input to the next). Each side is called with its own class: two copy-pasted
classes are compared as their users would meet them. A method whose class cannot be built
without arguments is not compared, and the report says so (`NOT_COMPARED`); so is a property (it
is read, never called) and an ``async def`` generator.

What the call gives is settled in the judge before the judge's observer records it
(`guardrail.settling`: coroutines run, iterators drained, tuples and lists item by item), by
`CALLING_SETUP`, the observing spec's setup: the settle helper and the instance builder.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass

from guardrail.probes import Probe
from guardrail.settling import NOT_COMPARED_ERROR, SETTLE_SETUP
from guardrail.spec import Spec
from guardrail.verdict import Observation, Verdict

__all__ = [
    "CALLING_SETUP",
    "NOT_COMPARED",
    "Callee",
    "accepts",
    "callee_of",
    "observations",
    "observing_spec",
    "observing_test",
]

_INSTANCE = "__guardrail_instance__"

# Judge-side code (trusted: written here, never taken from the audited tree).
CALLING_SETUP = (
    SETTLE_SETUP
    + f"""

def {_INSTANCE}(cls):
    try:
        return cls()
    except Exception as exc:
        raise {NOT_COMPARED_ERROR}(
            "its class cannot be built without arguments"
            f" ({{type(exc).__name__}} from {{cls.__name__}}())"
        ) from None
"""
)

# What a decorator makes of a method, by its last name.
_PROPERTIES = frozenset({"property", "cached_property", "abstractproperty"})

NOT_COMPARED = {
    "method": "a method of a nested class or a class inside a function",
    "property": "a property: it is read from an instance, never called",
    "async-generator": "an async generator: nothing drains it here",
    "does-not-parse": "its text does not parse",
    "not-a-function": "its text is not one function definition",
    "no-inputs": "no inputs: nothing says what it takes",
}
"""Why a pair was not compared, for the reasons found before anything runs."""


@dataclass(frozen=True)
class Callee:
    """How the judge calls one member: ``expression`` evaluates to the callable, and the
    observing spec's entry point is ``entry`` (a module-level name: the function or the class).

    ``name`` and ``signature_code`` are what inputs are generated from: the function's name and
    its text with the parameter the call binds (``self``, ``cls``) taken out, so no input is
    made for it.
    """

    expression: str
    entry: str
    name: str
    signature_code: str


def callee_of(code: str, qualified_name: str, entry_point: str) -> Callee | str:
    """How to call the function or method ``code`` defines, or why it cannot be (a key of
    `NOT_COMPARED`)."""
    node = _definition(code)
    if isinstance(node, str):
        return node
    parts = qualified_name.split(".") if qualified_name else [entry_point or node.name]
    if len(parts) == 1:
        return Callee(parts[0], parts[0], parts[0], code)
    if len(parts) != 2 or not all(part.isidentifier() for part in parts):
        return "method"
    owner, name = parts
    decorators = {_last_name(d) for d in node.decorator_list}
    if decorators & _PROPERTIES:
        return "property"
    static = "staticmethod" in decorators
    unbound = code if static else _without_first_parameter(node)
    if unbound is None:
        return "method"  # nothing to bind the instance or the class to
    direct = static or "classmethod" in decorators
    through = f"{owner}.{name}" if direct else f"{_INSTANCE}({owner}).{name}"
    return Callee(through, owner, name, unbound)


def accepts(callee: Callee, probe: Probe) -> bool:
    """Whether ``probe``'s arguments bind to the callee's parameters (as Python would bind
    them, from its text): an input one copy cannot even take tells a different signature, not a
    different behaviour, so a pair is compared only on inputs both take. True when the text
    does not say (it does not parse)."""
    node = _definition(callee.signature_code)
    if isinstance(node, str):
        return True
    given = node.args
    positional = [a.arg for a in (*given.posonlyargs, *given.args)]
    required = len(positional) - len(given.defaults)
    if len(probe.args) > len(positional) and given.vararg is None:
        return False
    named = {key for key, _ in probe.kwargs}
    by_name = set(positional[len(given.posonlyargs) :]) | {a.arg for a in given.kwonlyargs}
    if named - by_name and given.kwarg is None:
        return False
    bound = set(positional[: len(probe.args)])
    if bound & named:
        return False  # one parameter given twice
    missing = [name for name in positional[len(probe.args) : required] if name not in named]
    kwonly = [
        a.arg
        for a, default in zip(given.kwonlyargs, given.kw_defaults, strict=True)
        if default is None and a.arg not in named
    ]
    return not missing and not kwonly


def observing_test(callee: Callee, probe: Probe) -> str:
    """The probe as a test of ``callee``: the judge's observer records the settled result."""
    return probe.test_of(callee.expression)


def observing_spec(callee: Callee, probes: list[Probe], setup: str = "") -> Spec:
    """Every probe as a test of ``callee``, after the settling helpers and ``setup`` (the
    member's own stored tests' setup)."""
    tests = [observing_test(callee, probe) for probe in probes]
    return Spec.build(tests, callee.entry, CALLING_SETUP + "\n" + setup)


def observations(verdict: Verdict, tests: list[str]) -> list[Observation]:
    """One observation per test of an observing job; unjudged ones say why, in words."""
    if len(verdict.tests) != len(tests):  # it never got to its tests (did not load, a fault)
        why = f"{verdict.status.value}: {verdict.reason.value}"
        if verdict.message:
            why += f" ({verdict.message[:300]})"
        return [Observation.unjudged(why) for _ in tests]
    found = []
    for outcome, test in zip(verdict.tests, tests, strict=True):
        if outcome.test == test and outcome.fault is None and outcome.observed is not None:
            found.append(outcome.observed)
        elif outcome.outcome == f"ERROR:{NOT_COMPARED_ERROR}":
            found.append(Observation.unjudged(outcome.detail or "not compared"))
        elif outcome.fault is not None:
            detail = f": {outcome.detail[:300]}" if outcome.detail else ""
            found.append(Observation.unjudged(f"{outcome.fault.value}{detail}"))
        else:
            found.append(Observation.unjudged(outcome.outcome))
    return found


def _definition(code: str) -> ast.FunctionDef | ast.AsyncFunctionDef | str:
    """The function ``code`` defines, or why it is none we can call."""
    try:
        body = ast.parse(code).body
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return "does-not-parse"
    # A split snippet starts with the module imports it uses; its definition comes last.
    if not body or not all(isinstance(node, ast.Import | ast.ImportFrom) for node in body[:-1]):
        return "not-a-function"
    node = body[-1]
    if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
        return "not-a-function"
    if isinstance(node, ast.AsyncFunctionDef) and _yields(node):
        return "async-generator"
    return node


def _without_first_parameter(node: ast.FunctionDef | ast.AsyncFunctionDef) -> str | None:
    """``node``'s text with its first positional parameter gone (None when it has none)."""
    arguments = node.args
    if arguments.posonlyargs:
        kept = ast.arguments(**{**vars(arguments), "posonlyargs": arguments.posonlyargs[1:]})
    elif arguments.args:
        rest = arguments.args[1:]
        defaults = arguments.defaults[-len(rest) :] if rest else []
        kept = ast.arguments(**{**vars(arguments), "args": rest, "defaults": defaults})
    else:
        return None
    copy = type(node)(**{**vars(node), "args": kept, "decorator_list": []})
    return ast.unparse(ast.fix_missing_locations(ast.Module(body=[copy], type_ignores=[])))


def _yields(node: ast.AsyncFunctionDef) -> bool:
    """Whether ``node``'s own body yields (not a function nested in it)."""
    stack: list[ast.AST] = list(node.body)
    while stack:
        current = stack.pop()
        if isinstance(current, ast.Yield | ast.YieldFrom):
            return True
        if not isinstance(current, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            stack.extend(ast.iter_child_nodes(current))
    return False


def _last_name(decorator: ast.expr) -> str:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    if isinstance(target, ast.Attribute):
        return target.attr
    return target.id if isinstance(target, ast.Name) else ""
