"""How an audit calls a near-clone, and what it does with the result before comparing it.

A member of a cluster is called by a *callee* expression the judge evaluates in the member's
module context (`Callee`): a module-level function by its name; a ``@staticmethod`` or
``@classmethod`` through its class (``Class.name``); an instance method on a fresh instance of
its own class built without arguments (``Class().name``, one instance per input, so no state
carries from one input to the next). Each side is called with its own class: two copy-pasted
classes are compared as their users would meet them. A method whose class cannot be built
without arguments is not compared, and the report says so (`NOT_COMPARED`); so is a property (it
is read, never called) and an ``async def`` generator.

What the call gives is *settled* in the judge (`SETTLE_SETUP`, run as the observing spec's
setup) before the judge's observer records it:

* a coroutine (an ``async def`` function's result) is run to completion by ``asyncio.run`` in
  the candidate's own process, so whatever it awaits runs on a real event loop; the job's
  timeout bounds it, and a coroutine that never finishes is a timeout (unjudged), never a value;
* an iterator (a generator, ``map``, ``itertools.islice``..., anything that is its own
  iterator) is drained: at most `DRAIN_LIMIT` items, one ``next`` each, then one more to learn
  whether it was exhausted. What is compared is ``(items, ending)``, where the ending is
  ``exhausted``, ``more`` (an infinite or long iterator: equal prefixes are equal, never a
  divergence) or the name of the exception raised while draining; an exception before the first
  item is the call's own (``raises X``, as for a copy that checks its arguments eagerly);
* anything else is left as it is: plain data is observed, a candidate object that is not its own
  iterator cannot be observed (unjudged, with the judge's reason).

The settled iterator crosses the observer as a plain tuple tagged `DRAINED`, which
`describe` turns back into the report's words. Every step runs in the judge, on handles the
judge drives; the candidate never sees what the other side gave.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from typing import Literal

from guardrail.probes import Probe
from guardrail.sandbox.runner.observing import OBSERVER
from guardrail.spec import Spec
from guardrail.verdict import Observation, Verdict

__all__ = [
    "DRAINED",
    "DRAIN_LIMIT",
    "NOT_COMPARED",
    "NOT_COMPARED_ERROR",
    "SETTLE",
    "SETTLE_SETUP",
    "Callee",
    "accepts",
    "callee_of",
    "describe",
    "observations",
    "observing_spec",
    "observing_test",
]

DRAIN_LIMIT = 1000  # items of an iterator result compared
DRAINED = "<guardrail: drained iterator>"  # the tag of a settled iterator's tuple
SETTLE = "__guardrail_settle__"
_INSTANCE = "__guardrail_instance__"
NOT_COMPARED_ERROR = "GuardrailNotCompared"

# Judge-side code (trusted: written here, never taken from the audited tree). ``type(x).__name__``
# of a candidate object is its class's name as the candidate process reports it; ``iter(h) is h``
# holds for a handle exactly when the candidate's object is its own iterator.
SETTLE_SETUP = f'''
class {NOT_COMPARED_ERROR}(BaseException):
    """Not an answer of the candidate: the audit could not call it (the message says why)."""


def {_INSTANCE}(cls):
    try:
        return cls()
    except Exception as exc:
        raise {NOT_COMPARED_ERROR}(
            "its class cannot be built without arguments"
            f" ({{type(exc).__name__}} from {{cls.__name__}}())"
        ) from None


def {SETTLE}(value, depth=0):
    plain = (type(None), bool, int, float, complex, str, bytes, bytearray, tuple, list, dict,
             set, frozenset, range, slice)
    if type(value) in plain or depth > 1:
        return value
    kind = type(value).__name__
    if kind == "async_generator":
        raise {NOT_COMPARED_ERROR}("it returns an async generator")
    if kind == "coroutine":
        loop = value.cr_frame.f_builtins["__import__"]("asyncio")
        return {SETTLE}(loop.run(value), depth + 1)
    try:
        own = iter(value) is value
    except Exception:
        return value
    if not own:
        return value
    items = []
    ending = "exhausted"
    try:
        for item in value:
            if len(items) == {DRAIN_LIMIT}:
                ending = "more"
                break
            items.append(item)
    except Exception as exc:
        if not items:  # before its first item: what an eager copy raising at once does
            raise
        name = "".join(c for c in type(exc).__name__ if c.isalnum() or c == "_")[:100]
        ending = "raises " + name
    return ({DRAINED!r}, ending, items)
'''

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
    parts = [*probe.args, *(f"{key}={value}" for key, value in probe.kwargs)]
    call = f"lambda *a, **k: {SETTLE}({callee.expression}(*a, **k))"
    return f"{OBSERVER}({', '.join([call, *parts])})"


def observing_spec(callee: Callee, probes: list[Probe], setup: str = "") -> Spec:
    """Every probe as a test of ``callee``, after the settling helpers and ``setup`` (the
    member's own stored tests' setup)."""
    tests = [observing_test(callee, probe) for probe in probes]
    return Spec.build(tests, callee.entry, SETTLE_SETUP + "\n" + setup)


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


_DRAINED_TEXT = re.compile(r"\('" + re.escape(DRAINED) + r"', '(exhausted|more|raises \w+)', ")


def describe(observation: Observation) -> tuple[Literal["value", "raises", "yields"], str]:
    """``(kind, text)`` of a judged observation for the report: ``yields`` for a drained
    iterator (its items, then how it ended), else the observation's own kind and text."""
    if observation.kind == "raises":
        return "raises", observation.text
    found = _DRAINED_TEXT.match(observation.text)
    if found is None:
        return "value", observation.text
    items = observation.text[found.end() :]
    items = items[:-1] if items.endswith(")") else items  # a text cut short keeps its cut mark
    ending = {"exhausted": "exhausted", "more": f"more after {DRAIN_LIMIT}"}.get(
        found.group(1), found.group(1)
    )
    return "yields", f"{items} ({ending})"


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
