"""A test's function as the candidate sees it: a real function with the same parameters, whose
body is a callback to the judge.

Code that inspects the callables it is given (``inspect.signature``, ``f.__code__.co_argcount``,
toolz's ``num_required_args``, a memoizer's ``has_keywords``, ``isinstance(f, FunctionType)``)
reads the test's function. Its code object holds the test's constants, so it never crosses; what
crosses instead (`describe`, in the judge) is its shape: each parameter's name and kind and
whether it has a default, with its name, qualname, module and docstring. The candidate builds a
function with exactly those parameters (`signed_stub`), so those questions get the answers they
get in-process, while its code object and globals are the stub's own. Calling it sends the
arguments to the judge as the caller bound them; an omitted one is left to the judge's own default.

A default's value never crosses (it is one of the test's constants). The stub's defaults are
stand-ins (`_Default`): ``p.default is p.empty`` and passing one back in its own place (a wrapper
forwarding its defaults) work as in-process; any other use of one (its repr in
``str(inspect.signature(f))``, ``==``, ``bool``, an attribute, passing it anywhere else) is a read
of the test's defaults, which the judge makes that test's ``unserialisable``, never a value the
candidate could be failed on.

A function whose shape this cannot carry (annotations, attributes in its ``__dict__``, a name
that is not an identifier) keeps the plain callback stub (`stubs.JudgeCallable`).
"""

from __future__ import annotations

import inspect
import keyword
import types
import warnings
from collections.abc import Callable
from typing import Any

from .remote import REFUSED_OPERATIONS

__all__ = ["describe", "signed_stub"]

MAX_PARAMETERS = 64
_DOC_CHARS = 4_000
_NOT_PLAIN = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_NOT_PLAIN |= inspect.CO_ITERABLE_COROUTINE
_OWN_PREFIX = "_guardrail_"  # the generated code's own names: no parameter may take one
_P = inspect.Parameter
_KINDS = {int(kind): kind for kind in inspect._ParameterKind}


def describe(value: object) -> dict[str, Any] | None:
    """The shape of a test's plain Python function, or None to keep it a plain stub."""
    if type(value) is not types.FunctionType:
        return None
    if value.__dict__ or getattr(value, "__annotations__", None):
        return None
    if value.__code__.co_flags & _NOT_PLAIN:  # a stub would not be a generator or coroutine
        return None
    try:
        signature = inspect.signature(value, follow_wrapped=False)
    except (TypeError, ValueError):
        return None
    parameters = list(signature.parameters.values())
    if len(parameters) > MAX_PARAMETERS or not all(_usable(p.name) for p in parameters):
        return None
    doc = value.__doc__
    return {
        "parameters": [[p.name, int(p.kind), p.default is not p.empty] for p in parameters],
        "qualname": str(value.__qualname__)[:200],
        "module": str(value.__module__)[:200] if value.__module__ is not None else None,
        "doc": doc[:_DOC_CHARS] if isinstance(doc, str) else None,
    }


def _usable(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith(_OWN_PREFIX)


class _Default:
    """A stand-in for a default of a test's function: any use is a read of the defaults."""

    __slots__ = ("_read",)

    def __init__(self, read: Callable[[], Any]) -> None:
        object.__setattr__(self, "_read", read)

    def __getattr__(self, name: str) -> Any:
        return _read_defaults(self)


def _read_defaults(default: _Default, *_args: Any, **_kwargs: Any) -> Any:
    object.__getattribute__(default, "_read")()  # the judge refuses it; this never returns
    raise TypeError("the defaults of a test's function do not cross")


for _name in [
    "call",
    "setattr",
    "delattr",
    "getitem",
    "setitem",
    "delitem",
    "iter",
    "len",
    "contains",
    "next",
    *REFUSED_OPERATIONS,
]:
    setattr(_Default, f"__{_name}__", _read_defaults)


def signed_stub(
    description: dict[str, Any],
    name: str,
    call: Callable[[tuple[Any, ...], dict[str, Any]], Any],
    read_defaults: Callable[[], Any],
) -> types.FunctionType | None:
    """A function with the described parameters whose body is ``call(args, kwargs)``, or None
    for a description it cannot build (the caller keeps the plain stub). ``read_defaults`` asks
    the judge for the test's defaults, which it refuses: what any use of a stand-in does."""
    try:
        parameters = [(str(n), _KINDS[int(k)], d is True) for n, k, d in description["parameters"]]
        # Refuses an order, a name or a default Python would refuse (any value stands in here).
        inspect.Signature([_P(n, k, default=None if d else _P.empty) for n, k, d in parameters])
    except (KeyError, TypeError, ValueError):
        return None
    if len(parameters) > MAX_PARAMETERS or not all(_usable(n) for n, _, _ in parameters):
        return None
    stand_ins = {n: _Default(read_defaults) for n, _, has_default in parameters if has_default}
    function = _compiled(parameters, _forward(call, stand_ins), name, stand_ins)
    function.__name__ = name
    function.__qualname__ = str(description.get("qualname") or name)
    function.__module__ = description.get("module")  # type: ignore[assignment]
    function.__doc__ = description.get("doc")
    return function


def _compiled(
    parameters: list[tuple[str, Any, bool]],
    forward: Any,
    name: str,
    stand_ins: dict[str, _Default],
) -> types.FunctionType:
    """The function itself. Its one forward is a constant of its code object, not a global nor
    a closure, so code that rebuilds a function from ``f.__code__`` (boltons' copy_function,
    ``FunctionType(f.__code__, {})``) gets one that still works, as it would in-process."""
    with warnings.catch_warnings():  # calling a str constant: replaced before it ever runs
        warnings.simplefilter("ignore", SyntaxWarning)
        scope: dict[str, Any] = {"_guardrail_missing_": stand_ins}
        exec(compile(_source(parameters), "<test callable>", "exec"), scope)
    made: types.FunctionType = scope["_guardrail_stub_"]
    consts = tuple(forward if c == _FORWARD else c for c in made.__code__.co_consts)
    code = made.__code__.replace(co_consts=consts, co_name=name)
    function = types.FunctionType(code, {"__builtins__": {}})
    function.__defaults__ = made.__defaults__
    function.__kwdefaults__ = made.__kwdefaults__
    return function


_FORWARD = "_guardrail_forward_"


def _source(parameters: list[tuple[str, Any, bool]]) -> str:
    """``def _guardrail_stub_(...)``: the described parameters, its body one call of a constant
    (`_FORWARD`, replaced by the forward itself)."""
    listed: list[str] = []
    only: list[str] = []
    named: list[str] = []
    keywords: list[str] = []
    varargs, varkw = "()", "{}"
    for n, (name, kind, has_default) in enumerate(parameters):
        text = f"{name}=_guardrail_missing_[{name!r}]" if has_default else name
        if kind is _P.POSITIONAL_ONLY:
            only.append(name)
        elif kind is _P.POSITIONAL_OR_KEYWORD:
            named.append(name)
        elif kind is _P.VAR_POSITIONAL:
            text, varargs = f"*{name}", name
        elif kind is _P.KEYWORD_ONLY:
            if varargs == "()" and not keywords:
                listed.append("*")
            keywords.append(name)
        else:
            text, varkw = f"**{name}", name
        listed.append(text)
        following = parameters[n + 1][1] if n + 1 < len(parameters) else None
        if kind is _P.POSITIONAL_ONLY and following is not _P.POSITIONAL_ONLY:
            listed.append("/")

    def pairs(names: list[str]) -> str:
        return "(" + "".join(f"({n!r}, {n}), " for n in names) + ")"

    return (
        f"def _guardrail_stub_({', '.join(listed)}):\n"
        f"    return {_FORWARD!r}({pairs(only)}, {pairs(named)}, {varargs}, {pairs(keywords)},"
        f" {varkw})\n\n\n"
    )


def _forward(
    call: Callable[[tuple[Any, ...], dict[str, Any]], Any], stand_ins: dict[str, _Default]
) -> Callable[..., Any]:
    """The stub's body: the arguments as the caller gave them, the omitted ones left out. A
    parameter's own stand-in in its own place is as good as omitted; a stand-in anywhere else
    (another parameter's, in a place where leaving it out would shift the next positional
    arguments, in ``*args`` or ``**kwargs``) is a use of it."""

    def omitted(name: str, value: Any) -> bool:
        return name in stand_ins and value is stand_ins[name]

    def forward(
        only: tuple[tuple[str, Any], ...],
        named: tuple[tuple[str, Any], ...],
        varargs: tuple[Any, ...],
        keywords: tuple[tuple[str, Any], ...],
        varkw: dict[str, Any],
    ) -> Any:
        positional = [*only, *named] if varargs else list(only)
        given = [not omitted(n, v) for n, v in positional]
        used = [
            v for n, v in [*only, *named, *keywords] if type(v) is _Default and not omitted(n, v)
        ]
        used += [v for v in (*varargs, *varkw.values()) if type(v) is _Default]
        if False in given and True in given[given.index(False) :]:  # leaving it out would shift
            used += [v for n, v in positional if omitted(n, v)]
        if used:
            _read_defaults(used[0])
        args = [v for n, v in positional if not omitted(n, v)] + list(varargs)
        kwargs: dict[str, Any] = {}
        if not varargs:
            kwargs.update((n, v) for n, v in named if not omitted(n, v))
        kwargs.update((n, v) for n, v in keywords if not omitted(n, v))
        kwargs.update(varkw)
        return call(tuple(args), kwargs)

    return forward
