"""Which classes a doctest example defines in the candidate's process rather than in the judge.

In doctest, a class an example defines runs against the module: ``@partial_ordering`` decorates
it, ``@cachedmethod('cache')`` wraps its method, ``get_all_subclasses(A)`` and ``get_all(Ratking)``
look at it. The judge cannot hand its own classes to the candidate, so such a class is defined in
the candidate's process instead (`handles.Server.define`), and the tests hold a candidate class.

That moves test code into the process of the code under test, so it is done only where the
candidate gains nothing it would not have in-process, or where there is no test logic to subvert:

* the class statement hands the class or its methods to the candidate's code as it is defined:
  a decorator, a base class or a keyword (a metaclass) of the class, or a decorator of one of its
  methods, names the candidate module's own code (in-process that code can replace anything in
  the class already); or
* the class holds nothing but constants: its body is a docstring, ``pass`` and constant class
  attributes, with no decorators and only ``object`` or such classes as bases (``class
  Ratking(object): pass``, ``class B(A)``); an ``__init__`` storing its arguments is not enough,
  since the candidate's copy of a test's list it stored would not follow the test's changes.

Every name the statement reads must be a builtin, the module's, or a class defined in the
candidate before: a class that reads the test's own names (a helper an earlier example defined)
stays in the judge, and so does every class after a star import. A class with any other logic
stays in the judge as well, also when it subclasses one defined in the candidate: only the
module's own code (not a builtin, not the tests' classes, not a name the statement binds, as a
lambda's parameter) counts as handing a class over.
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
    if "*" in session.bound:
        return None  # a star import bound names the text cannot see
    judges = session.bound - session.in_candidate  # the test's own names, in the judge
    free = _free_names(node)
    if free & judges:
        return None
    header = [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)]
    header += [d for item in node.body if isinstance(item, _FUNCTIONS) for d in item.decorator_list]
    # Only the module's own code counts: not a builtin, not a name the statement binds itself
    # (a lambda's parameter), not a class the tests defined in the candidate (it holds no code
    # of the candidate's, so a subclass with logic would be test code handed to it).
    hands_over = any(
        name in free and name not in session.in_candidate and not hasattr(builtins, name)
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
        return False  # an __init__ storing the test's objects would not share them across
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
