"""Which classes a doctest example defines in the candidate's process rather than in the judge.

In doctest, a class an example defines runs against the module: ``@partial_ordering`` decorates
it, ``@cachedmethod('cache')`` wraps its method, ``get_all_subclasses(A)`` and ``get_all(Ratking)``
look at it. The judge cannot hand its own classes to the candidate, so such a class is defined in
the candidate's process instead (`handles.Server.define`), and the tests hold a candidate class.

That moves test code into the process of the code under test, so it is done only where the
candidate gains nothing it would not have in-process, or where there is no test logic to subvert:

* the class statement hands the class or its methods to the candidate's code as it is defined:
  a decorator, a base class or a keyword (a metaclass) of the class, or a decorator of one of its
  methods, names the candidate module's or a class already defined there (in-process that code
  can replace anything in the class already); or
* the class holds data only: its body is a docstring, ``pass``, constant class attributes and an
  ``__init__`` that only stores its parameters or constants on ``self`` (``class Flag: def
  __init__(self, length): self.length = length``), with no decorators and only ``object`` or
  candidate classes as bases; its behaviour is then nothing but attribute storage.

Every name the statement reads must be a builtin, the module's, or a class defined in the
candidate before: a class that reads the test's own names (a helper an earlier example defined)
stays in the judge. A class with any other logic stays in the judge as well.
"""

from __future__ import annotations

import ast
import builtins
from typing import Protocol

__all__ = ["candidate_class"]


class Session(Protocol):
    bound: set[str]  # names earlier examples bound (in the judge, or candidate classes)
    in_candidate: set[str]  # classes defined in the candidate's process


def candidate_class(source: str, session: Session) -> str | None:
    """The name of the class ``source`` defines, if it is to be defined in the candidate.

    Never raises: this runs inside the test's example, where an error of the judge's own would
    read as the code's ``ERROR``; anything unexpected keeps the class in the judge."""
    try:
        return _candidate_class(source, session)
    except Exception:  # see the docstring
        return None


def _candidate_class(source: str, session: Session) -> str | None:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    if len(tree.body) != 1 or not isinstance(tree.body[0], ast.ClassDef):
        return None
    node = tree.body[0]
    judges = session.bound - session.in_candidate  # the test's own names, in the judge
    if _free_names(node) & judges:
        return None
    header = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    header += [d for item in node.body if isinstance(item, _FUNCTIONS) for d in item.decorator_list]
    hands_over = any(
        name in session.in_candidate or not hasattr(builtins, name)
        for expression in header
        for name in _names(expression)
    )
    if hands_over or _data_only(node, session.in_candidate):
        return node.name
    return None


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _data_only(node: ast.ClassDef, in_candidate: set[str]) -> bool:
    if node.decorator_list or node.keywords:
        return False
    if not all(
        isinstance(b, ast.Name) and (b.id == "object" or b.id in in_candidate) for b in node.bases
    ):
        return False
    for item in node.body:
        if isinstance(item, ast.Pass) or _is_constant_statement(item):
            continue
        if isinstance(item, ast.FunctionDef) and item.name == "__init__" and _stores_only(item):
            continue
        return False
    return True


def _is_constant_statement(item: ast.stmt) -> bool:
    """A docstring, or ``NAME = <constant>``."""
    if isinstance(item, ast.Expr):
        return isinstance(item.value, ast.Constant)
    return (
        isinstance(item, ast.Assign)
        and all(isinstance(t, ast.Name) for t in item.targets)
        and isinstance(item.value, ast.Constant)
    )


def _stores_only(function: ast.FunctionDef) -> bool:
    """``__init__`` whose body only stores its parameters or constants on ``self``."""
    arguments = function.args
    if function.decorator_list or arguments.vararg or arguments.kwarg or not arguments.args:
        return False
    if any(
        not isinstance(d, ast.Constant) for d in [*arguments.defaults, *arguments.kw_defaults] if d
    ):
        return False
    own = arguments.args[0].arg
    parameters = {a.arg for a in [*arguments.args[1:], *arguments.kwonlyargs]}
    for statement in function.body:
        if isinstance(statement, ast.Pass) or _is_constant_statement(statement):
            continue
        if not isinstance(statement, ast.Assign):
            return False
        targets = [
            element
            for target in statement.targets
            for element in (target.elts if isinstance(target, ast.Tuple) else [target])
        ]
        values = (
            statement.value.elts if isinstance(statement.value, ast.Tuple) else [statement.value]
        )
        if not all(
            isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == own
            for t in targets
        ):
            return False
        if not all(
            isinstance(v, ast.Constant) or (isinstance(v, ast.Name) and v.id in parameters)
            for v in values
        ):
            return False
    return True


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def _free_names(node: ast.ClassDef) -> set[str]:
    """Names the statement reads that it does not bind itself (parameters included)."""
    bound = {
        n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
    }
    bound |= {a.arg for a in ast.walk(node) if isinstance(a, ast.arg)}
    bound |= {f.name for f in ast.walk(node) if isinstance(f, (*_FUNCTIONS, ast.ClassDef))}
    return _names(node) - bound
