"""Which of the candidate's names the tests' entry point is bound to, decided on the host.

The plan comes from trusted inputs only (the candidate's text parsed, never run; the spec; the
module context) and goes into the job as ``bind`` and into the verdict as ``alias``: the
candidate's process never chooses it.

* The candidate's text defines the name the tests call: bound to itself; unless the tests
  import that name from another module of the candidate's package (a curried wrapper): then
  the examples never call the plain function, and the job is refused as ``missing_context``.
* A method snippet judged in its class: the tests' name is its class or another name its module
  defines (a factory), bound to itself, only when the tests reach the method (an attribute of
  its name read, or the syntax that runs a dunder: `guardrail.reach`); never an alias.
* Otherwise an alias, only when nothing defines the tests' name (neither the snippet nor its
  module), the snippet has exactly one plausible function (a public top-level function no other
  one calls) and that function's signature accepts every call the tests and setup make to the
  name (positional count, keyword names, ``*args``/``**kwargs``), and the tests use the name only
  to call it.
* Anything else is refused before running: ``missing_entry_point``, with a message naming what
  the tests call and what the candidate defines.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass

from guardrail.reach import method_reached, test_trees
from guardrail.sandbox.runner.static import module_statements, plausible_functions
from guardrail.spec import Spec

__all__ = ["BindPlan", "module_names", "plan_binding"]

_Function = ast.FunctionDef | ast.AsyncFunctionDef


@dataclass(frozen=True, slots=True)
class BindPlan:
    """``bind`` for the job (None: refused, see ``refusal``) and the alias to report."""

    bind: dict[str, str] | None
    alias: str | None = None
    refusal: str = ""
    lacks_context: bool = False  # refused for want of context the job cannot carry, not the code


def plan_binding(
    code: str,
    spec: Spec,
    *,
    qualified_name: str = "",
    module_source: str | None = None,
    package: str | None = None,
    module: str | None = None,
) -> BindPlan:
    """The binding plan of ``code`` for ``spec``; see the module docstring.

    ``qualified_name``, ``module_source`` (the candidate's module with its text substituted),
    ``package`` (its top-level package) and ``module`` (its dotted name) are given when the
    candidate is judged in its module context.
    """
    name = spec.entry_point
    tree = ast.parse(code)  # the gate prechecked it
    parts = qualified_name.split(".") if qualified_name and module_source is not None else []
    if len(parts) > 1:
        return _method_plan(name, spec, parts, module_source or "")
    own = _defined(tree.body)
    if name in own:
        return _own_plan(name, spec, package, module)
    bound, called = _test_names(spec)
    if name in bound:
        # The tests define the name themselves (``from collections import deque``: an entry
        # point inferred from a call to their own import); what they call of the candidate's
        # own names is what is judged, each under its own name.
        mine = sorted((called - bound) & own)
        if mine:
            return BindPlan({entry: entry for entry in mine})
        return BindPlan(
            None,
            refusal=f"the tests define {name!r} themselves and call nothing the candidate"
            f" defines ({_describe(_signatures(tree)) or 'no function'})",
        )
    functions = _signatures(tree)
    alias, refusal = _alias(name, spec, code, functions=functions, module_source=module_source)
    if alias is None:
        return BindPlan(None, refusal=refusal)
    return BindPlan({name: alias}, alias=alias)


def _method_plan(name: str, spec: Spec, parts: list[str], module_source: str) -> BindPlan:
    """A method judged in its class: the tests call its class or another name of its module
    (a factory), bound to itself, and must reach the method (`guardrail.reach`); never an alias.
    """
    method = ".".join(parts)
    try:
        module: ast.Module | None = ast.parse(module_source)
    except (SyntaxError, ValueError):
        module = None  # it fails to load in the sandbox
    if not method_reached(test_trees([spec.setup, *spec.tests]), method, module):
        return BindPlan(
            None,
            refusal=f"the candidate is the method {method}, and the tests never reach it"
            f" (no attribute .{parts[-1]} read, nor the syntax that runs it, on {parts[-2]})",
        )
    if name == parts[0] or name in module_names(module_source):
        return BindPlan({name: name})
    return BindPlan(
        None,
        refusal=f"the tests call {name!r}, which the module of the method {method} does not define",
    )


def _alias(
    name: str,
    spec: Spec,
    code: str,
    *,
    functions: dict[str, _Function],
    module_source: str | None,
) -> tuple[str | None, str]:
    """The one function that may stand for ``name``, or None and why not."""
    defines = _describe(functions) or "no function"
    if module_source is not None and name in module_names(module_source):
        return None, (
            f"the tests call {name!r}, which the candidate's module defines, but the candidate"
            f" is not it: it defines {defines}"
        )
    choices = [f for f in plausible_functions(code) if f in functions]
    if len(choices) != 1:
        return None, f"the tests call {name!r}; the candidate defines {defines}"
    problem = _calls_problem(name, spec, functions[choices[0]])
    if problem:
        return None, (
            f"the tests call {name!r}; the candidate defines {defines}, not bound as {name!r}"
            f" because {problem}"
        )
    return choices[0], ""


def module_names(source: str) -> set[str] | _Everything:
    """Names a module's top level binds (defs, classes, assignments, imports, through blocks);
    a star import or a module ``__getattr__`` may bind any name."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return _Everything()
    names = _defined(tree.body)
    star = any(
        isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
        for node in module_statements(tree.body)
    )
    return _Everything() if star or "__getattr__" in names else names


class _Everything(set[str]):
    """Stands for "any name": membership is always true."""

    def __contains__(self, item: object) -> bool:
        return True


def _defined(body: list[ast.stmt]) -> set[str]:
    names: set[str] = set()
    for node in module_statements(body):
        if isinstance(node, _Function | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.Assign | ast.AugAssign | ast.AnnAssign | ast.For | ast.With):
            targets = (
                node.targets
                if isinstance(node, ast.Assign)
                else [i.optional_vars for i in node.items if i.optional_vars]
                if isinstance(node, ast.With)
                else [node.target]
            )
            for target in targets:
                names.update(
                    n.id
                    for n in ast.walk(target)
                    if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                )
    return names


def _signatures(tree: ast.Module) -> dict[str, _Function]:
    return {
        node.name: node
        for node in tree.body
        if isinstance(node, _Function) and not node.name.startswith("_")
    }


def _describe(functions: dict[str, _Function]) -> str:
    return ", ".join(f"{n}({ast.unparse(f.args)})" for n, f in sorted(functions.items()))


def _own_plan(name: str, spec: Spec, package: str | None, module: str | None) -> BindPlan:
    """The candidate's text defines the tests' name: bound to itself, unless the tests import
    that name from another module of the candidate's package (``>>> from toolz.curried import
    do``): the examples then call what that module makes of the function (a curried wrapper),
    and binding the plain function would judge what they never call (a correct function came
    out failed); that cannot be tied to the text on the host, so it is unjudgeable here. From
    its own module (``>>> from boltons.funcutils import wraps``) the import is the candidate:
    the module it is loaded in holds the retrieved text (the loader proves the name is it)."""
    wrapper = _imported_from(spec, name, package)
    if wrapper is not None and wrapper == module:
        wrapper = None
    if wrapper is None:
        return BindPlan({name: name})
    return BindPlan(
        None,
        refusal=f"the tests import {name!r} from {wrapper}, which wraps or re-exports the"
        " candidate; what that module makes of it is not judged in this job",
        lacks_context=True,
    )


def _imported_from(spec: Spec, name: str, package: str | None) -> str | None:
    """The module of the candidate's own package ``name`` is imported from by the setup or the
    tests (``from toolz.curried import do``), or None."""
    if package is None:
        return None
    for text in [spec.setup, *spec.tests]:
        for node in ast.walk(ast.parse(text)):
            if (
                isinstance(node, ast.ImportFrom)
                and node.level == 0
                and (node.module or "").split(".")[0] == package
                and any((alias.asname or alias.name) == name for alias in node.names)
            ):
                return str(node.module)
    return None


def _test_names(spec: Spec) -> tuple[set[str], set[str]]:
    """Names the tests and setup bind themselves, and names they read."""
    bound: set[str] = set()
    read: set[str] = set()
    for text in [spec.setup, *spec.tests]:
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Name):
                (read if isinstance(node.ctx, ast.Load) else bound).add(node.id)
            elif isinstance(node, ast.alias):
                bound.add((node.asname or node.name).split(".")[0])
            elif isinstance(node, _Function | ast.ClassDef):
                bound.add(node.name)
            elif isinstance(node, ast.arg):
                bound.add(node.arg)
    return bound, read


def _calls_problem(name: str, spec: Spec, function: _Function) -> str:
    """Why ``function`` cannot stand for ``name`` in these tests ('' when it can)."""
    calls: list[ast.Call] = []
    uses = 0
    for text in [spec.setup, *spec.tests]:
        tree = ast.parse(text)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                calls += [node] if node.func.id == name else []
            if isinstance(node, ast.Name) and node.id == name:
                uses += 1
    if uses > len(calls):
        return f"the tests use {name!r} as a value, not only call it"
    if not calls:
        return f"the tests never call {name!r} where its arguments can be checked"
    for call in calls:
        problem = next(_refusals(function, call), "")
        if problem:
            return f"{function.name}({ast.unparse(function.args)}) {problem}: {ast.unparse(call)}"
    return ""


def _refusals(function: _Function, call: ast.Call) -> Iterator[str]:
    """What the signature refuses of the call (nothing when it accepts it)."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    posonly = {a.arg for a in args.posonlyargs}
    named = {a.arg for a in [*args.args, *args.kwonlyargs]}
    given = sum(not isinstance(a, ast.Starred) for a in call.args)
    unknown_positional = any(isinstance(a, ast.Starred) for a in call.args)
    keywords = [k.arg for k in call.keywords if k.arg is not None]
    unknown_keywords = any(k.arg is None for k in call.keywords)
    if given > len(positional) and args.vararg is None:
        yield f"takes at most {len(positional)} positional arguments"
    for keyword in keywords:
        if keyword not in named and args.kwarg is None:
            yield f"has no parameter {keyword!r}"
        if keyword in {a.arg for a in positional[:given]}:
            yield f"would get {keyword!r} twice"
        if keyword in posonly and args.kwarg is None:
            yield f"takes {keyword!r} by position only"
    required = positional[: len(positional) - len(args.defaults)]
    for index, parameter in enumerate(required):
        supplied = index < given or (parameter.arg in keywords and parameter.arg not in posonly)
        if not (supplied or unknown_positional or unknown_keywords):
            yield f"needs argument {parameter.arg!r}"
    for parameter, default in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        if default is None and parameter.arg not in keywords and not unknown_keywords:
            yield f"needs keyword argument {parameter.arg!r}"
