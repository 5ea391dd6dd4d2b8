"""Whether tests reach a method, read from their text (never run), on the host.

A method is judged in its class, so the tests call the class (or a module factory) and reach the
method through an instance; tests that never reach it would verify it whatever its text says. A
method counts as reached when some test (or some doctest example a ``__doctest_example__`` test
carries) names it or uses the syntax that runs it:

* an ordinary method (or property, static or class method): an attribute of that name is read
  (``p.peek()``, ``omd.inverted()``, ``url.qp``, ``FilePerms.from_int(0o644)``);
* ``__init__`` / ``__new__``: the class is called (``peekable([1, 2])``);
* ``__call__``: something the tests made is called (``c = curry(f)`` then ``c(1)``, or
  ``curry(f)(1)``);
* a protocol method (``__iter__``, ``__len__``, ``__repr__``, ``__getitem__``, ``__eq__``,
  ``__enter__``...): the class is called and the protocol is used (``list(x)``/``for``,
  ``len(x)``, ``repr(x)``/``print(x)``/a bare expression in a doctest example, ``x[k]``,
  ``x == y``, ``with x``...). The text cannot tell that the protocol is used on the class's
  instance; the class being called in the same tests is as close as it gets.
* any other dunder (``__reduce__``, ``__del__``, ``__get__``, ``__set_name__``...): never.

Given the method's module (the index and the binding both give it), an attribute the class body
binds to the method (``qp = query_params``, ``count = _StatsProperty('count', _calc_count)``)
reaches it too, and so does reaching another method of its class whose body reads it (``to_text``
reads ``self.uses_netloc``), or a call to a top-level function of the module that reaches it
(bodies read the same way, at any depth of such calls). For a protocol method, the class is
"called" also through the module's makers of it: a top-level function, or a method of another
class (``sd.keys()``), whose body calls it, or calls or reads such a maker. Reached is
necessary, not sufficient: the tests still have to pass on the candidate's class, and a mutant
its doctests catch in-process is caught the same way here.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from guardrail.sandbox.runner.doctesting import example_sources

__all__ = ["method_reached", "test_trees"]

_ITERATING = frozenset(
    {"iter", "list", "tuple", "set", "frozenset", "sorted", "dict", "enumerate", "zip", "map",
     "filter", "sum", "min", "max", "any", "all"}
)  # fmt: skip
_CALLS = {
    "__iter__": _ITERATING,
    "__next__": _ITERATING | {"next"},
    "__len__": frozenset({"len", "bool"}),
    "__repr__": frozenset({"repr", "print", "str", "format"}),
    "__str__": frozenset({"str", "print", "format"}),
    "__hash__": frozenset({"hash"}),
    "__bool__": frozenset({"bool"}),
    "__reversed__": frozenset({"reversed"}),
    "__abs__": frozenset({"abs"}),
    "__round__": frozenset({"round"}),
    "__format__": frozenset({"format"}),
    "__int__": frozenset({"int"}),
    "__float__": frozenset({"float"}),
    "__index__": frozenset({"bin", "hex", "oct"}),
}
_COMPARISONS = {
    "__eq__": (ast.Eq, ast.NotEq),
    "__ne__": (ast.NotEq,),
    "__lt__": (ast.Lt, ast.Gt),
    "__le__": (ast.LtE, ast.GtE),
    "__gt__": (ast.Gt, ast.Lt),
    "__ge__": (ast.GtE, ast.LtE),
    "__contains__": (ast.In, ast.NotIn),
}
_OPERATORS = {
    "__add__": ast.Add, "__sub__": ast.Sub, "__mul__": ast.Mult, "__truediv__": ast.Div,
    "__floordiv__": ast.FloorDiv, "__mod__": ast.Mod, "__pow__": ast.Pow, "__and__": ast.BitAnd,
    "__or__": ast.BitOr, "__xor__": ast.BitXor, "__lshift__": ast.LShift,
    "__rshift__": ast.RShift, "__matmul__": ast.MatMult,
}  # fmt: skip
_SUBSCRIPTS = {"__getitem__": ast.Load, "__setitem__": ast.Store, "__delitem__": ast.Del}


def test_trees(texts: Iterable[str]) -> list[ast.Module]:
    """The parsed tests, then the doctest example sources each carries (those that parse)."""
    trees: list[ast.Module] = []
    for text in texts:
        tree = ast.parse(text)
        trees.append(tree)
        for source in example_sources(tree):
            try:
                trees.append(ast.parse(source))
            except (SyntaxError, ValueError):
                continue  # the example fails in the judge as doctest fails it
    return trees


def method_reached(
    trees: list[ast.Module], qualified_name: str, module: ast.Module | None = None
) -> bool:
    """Whether the tests (`test_trees`) reach the method ``qualified_name`` (``Class.method``),
    themselves or by calling a top-level function of ``module`` (the method's module) that
    reaches it (``box_area(2, 3)`` whose body calls ``Box(w, h).area()``), at any depth."""
    aliases = _class_aliases(module, qualified_name) if module is not None else set()
    owner = qualified_name.rpartition(".")[0]
    makers = _Makers() if module is None else _makers(module, owner.rpartition(".")[2])
    if _reached(trees, qualified_name, aliases, makers):
        return True
    for sibling in set() if module is None else _methods_reaching(module, qualified_name, aliases):
        if _reached(trees, f"{owner}.{sibling}", set(), makers):
            return True
    through = (
        set() if module is None else _functions_reaching(module, qualified_name, aliases, makers)
    )
    return any(
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in through
        for tree in trees
        for node in ast.walk(tree)
    )


def _methods_reaching(module: ast.Module, qualified_name: str, aliases: set[str]) -> set[str]:
    """The other methods of the class whose bodies read the method (``self.uses_netloc`` in
    ``to_text``), or read one that does, at any depth: reaching them reaches it."""
    methods = {
        node.name: node
        for node in _class_body(module, qualified_name)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    method = qualified_name.rpartition(".")[2]
    read = {method, *aliases}
    reaching: set[str] = set()
    while True:
        more = {
            name
            for name, node in methods.items()
            if name not in reaching | {method}
            and any(isinstance(n, ast.Attribute) and n.attr in read for n in ast.walk(node))
        }
        if not more:
            return reaching
        reaching |= more
        read |= more


def _class_body(module: ast.Module, qualified_name: str) -> list[ast.stmt]:
    body: list[ast.stmt] = module.body
    for name in qualified_name.split(".")[:-1]:
        found = [n for n in body if isinstance(n, ast.ClassDef) and n.name == name]
        if not found:
            return []
        body = found[0].body
    return body


def _class_aliases(module: ast.Module, qualified_name: str) -> set[str]:
    """Names the method's class body binds to an expression naming it: ``qp = query_params``,
    ``count = _StatsProperty('count', _calc_count)``; their attributes reach it too."""
    method = qualified_name.rpartition(".")[2]
    body = _class_body(module, qualified_name)
    return {
        target.id
        for node in body
        if isinstance(node, ast.Assign)
        and any(isinstance(n, ast.Name) and n.id == method for n in ast.walk(node.value))
        for target in node.targets
        if isinstance(target, ast.Name)
    }


@dataclass(frozen=True, slots=True)
class _Makers:
    """What makes an instance of a class besides calling it: the module's top-level functions
    (called by name) and its classes' methods (an attribute of that name read) whose bodies call
    the class, or call or read one that does (``sd.keys()`` returns ``SortedKeysView(self)``)."""

    functions: frozenset[str] = frozenset()
    methods: frozenset[str] = frozenset()

    def make(self, node: ast.AST, owner: str) -> bool:
        """Whether ``node`` makes an instance of ``owner``: calls it or a maker, reads a maker."""
        if isinstance(node, ast.Call):
            return _name_of(node.func) == owner or (
                isinstance(node.func, ast.Name) and node.func.id in self.functions
            )
        return isinstance(node, ast.Attribute) and node.attr in self.methods


@functools.lru_cache(maxsize=64)  # one module's methods are judged one after another
def _makers(module: ast.Module, owner: str) -> _Makers:
    """The `_Makers` of the class ``owner`` in ``module`` (its own methods excepted: reaching
    them needs an instance already; dunders are never makers)."""
    functions = {
        node.name: node
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    methods = [
        (node.name, node)
        for cls in module.body
        if isinstance(cls, ast.ClassDef) and cls.name != owner
        for node in cls.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and not node.name.startswith("__")
    ]
    makers = _Makers()
    while True:
        more = _Makers(
            frozenset(n for n, f in functions.items() if _makes(f, owner, makers)),
            frozenset(n for n, m in methods if _makes(m, owner, makers)),
        )
        if more == makers:
            return makers
        makers = more


def _makes(function: ast.AST, owner: str, makers: _Makers) -> bool:
    return any(makers.make(node, owner) for node in ast.walk(function))


def _functions_reaching(
    module: ast.Module, qualified_name: str, aliases: set[str], makers: _Makers
) -> set[str]:
    functions = {
        node.name: ast.Module(body=[node], type_ignores=[])
        for node in module.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    reaching = {
        n for n, body in functions.items() if _reached([body], qualified_name, aliases, makers)
    }
    while True:  # a function calling one that reaches it reaches it too
        more = {
            name
            for name, body in functions.items()
            if name not in reaching
            and any(
                isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in reaching
                for n in ast.walk(body)
            )
        }
        if not more:
            return reaching
        reaching |= more


def _reached(
    trees: list[ast.Module], qualified_name: str, aliases: set[str], makers: _Makers
) -> bool:
    *classes, method = qualified_name.split(".")
    if not classes:
        return False
    owner = classes[-1]
    nodes = [node for tree in trees for node in ast.walk(tree)]
    is_dunder = method.startswith("__") and method.endswith("__")
    if not is_dunder:
        names = {method, *aliases}
        return any(isinstance(n, ast.Attribute) and n.attr in names for n in nodes)
    if method in ("__init__", "__new__"):
        return any(isinstance(n, ast.Call) and _name_of(n.func) == owner for n in nodes)
    instantiated = any(makers.make(n, owner) for n in nodes)
    if method == "__call__":
        made = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return any(
            isinstance(n, ast.Call)
            and (isinstance(n.func, ast.Call) or _name_of(n.func) in made - {owner})
            for n in nodes
        )
    return instantiated and any(_uses_protocol(n, method) for n in nodes)


def _uses_protocol(node: ast.AST, method: str) -> bool:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        return node.func.id in _CALLS.get(method, ())
    if isinstance(node, ast.Compare):
        return any(isinstance(op, _COMPARISONS.get(method, ())) for op in node.ops)
    if isinstance(node, ast.Subscript):
        return method in _SUBSCRIPTS and isinstance(node.ctx, _SUBSCRIPTS[method])
    if isinstance(node, ast.BinOp | ast.AugAssign):
        reflected = "__" + method[3:] if method[2:3] in ("r", "i") else method  # __radd__
        operator = _OPERATORS.get(method) or _OPERATORS.get(reflected)
        return operator is not None and isinstance(node.op, operator)
    syntax = _SYNTAX.get(method)
    return syntax is not None and syntax(node)


def _shows_a_value(node: ast.AST) -> bool:
    """A doctest example that is a bare expression: doctest shows its repr."""
    return isinstance(node, ast.Module) and any(isinstance(s, ast.Expr) for s in node.body)


def _tests_truth(node: ast.AST) -> bool:
    return isinstance(node, ast.If | ast.While | ast.IfExp | ast.BoolOp | ast.Assert) or (
        isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    )


def _iterates(node: ast.AST) -> bool:
    return isinstance(node, ast.For | ast.comprehension | ast.Starred)


_SYNTAX: dict[str, Callable[[ast.AST], bool]] = {
    "__iter__": _iterates,
    "__next__": _iterates,
    "__repr__": _shows_a_value,
    "__str__": lambda node: isinstance(node, ast.JoinedStr),
    "__bool__": _tests_truth,
    "__len__": _tests_truth,
    "__enter__": lambda node: isinstance(node, ast.With),
    "__exit__": lambda node: isinstance(node, ast.With),
}


def _name_of(func: ast.expr) -> str:
    if isinstance(func, ast.Attribute):
        return func.attr
    return func.id if isinstance(func, ast.Name) else ""
