"""What the tests' reads of a judged method's name yield: `retrieved`'s checks of a class.

A class's method stays in its ``__dict__`` and still the tests may be handed something else:
an instance's ``__dict__`` shadows it (``self.sum_squares = ...`` in ``__init__``), or a
``__getattribute__``/``__getattr__`` of the class (or its metaclass, or one set on it after the
class statement) serves another function, one that may even call the real method and throw its
answer away. So every read the tests make of a judged method's name (`read_attribute`, the
`handles` server's ``getattr`` operation, known by identity) must find, as Python would, the
class's own entry, and yield what its descriptor makes of it: the function itself from the
class, a bound method whose ``__func__`` it is from an instance, the ``staticmethod``'s
function, the ``classmethod``'s bound to the class, a ``property``'s or
``functools.cached_property``'s getter's value (a cached value only the one its own ``__get__``
stored). And the class's and its metaclass's lookup hooks must be ones the retrieved text
writes. Everything is read through ``type``'s own descriptors, never asked of the objects.
"""

from __future__ import annotations

import builtins
import functools
from collections.abc import Callable
from types import CodeType, FunctionType, GetSetDescriptorType, MethodType
from typing import Any

from .fingerprints import FUNCTION

__all__ = ["Reads", "method_reads", "read_attribute", "with_reads"]

Invoke = Callable[[Any, list[Any], dict[str, Any]], Any]

_HOOKS = ("__getattribute__", "__getattr__")
_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by Python code, not a builtin C type


def read_attribute(target: Any, name: Any) -> Any:
    """The tests' attribute read (``getattr``): `retrieved` knows it by identity."""
    return getattr(target, str(name))


Reads = tuple[
    Callable[[Any], str | None],  # hooks(cls): a lookup hook the text does not write, or None
    Callable[[Any, Any, str], str | None],  # before(owner, obj, name): a problem, or None
    Callable[[Any, Any, str, Any], str | None],  # after(owner, obj, name, result)
]


def method_reads(written: Callable[[Any], bool]) -> Reads:
    """The checks of one job's reads; ``written(value)``: the retrieved text writes ``value``
    (one of its functions, made in the module). References are taken now, before any code of
    the module runs."""
    type_, isinstance_, id_ = builtins.type, builtins.isinstance, builtins.id
    class_dict = builtins.type.__dict__["__dict__"].__get__
    mro_of = builtins.type.__dict__["__mro__"].__get__
    flags_of = builtins.type.__dict__["__flags__"].__get__
    has, get = builtins.dict.__contains__, builtins.dict.get
    object_, type_type = builtins.object, builtins.type
    cached_type = functools.cached_property
    cached: dict[int, tuple[Any, Any]] = {}  # id(instance): (it, what cached_property stored)
    odd = object_()  # an instance __dict__ that is not Python's own

    def hooks(cls: Any) -> str | None:
        for klass in (*mro_of(cls), *mro_of(type_(cls))):
            if klass is object_ or klass is type_type or not flags_of(klass) & _HEAP_TYPE:
                continue  # a builtin type's own slot (dict's __getattribute__) is Python's
            held = class_dict(klass)
            for hook in _HOOKS:
                if hook in held and not written(held[hook]):
                    return f"a {hook} the retrieved text does not write serves the class's names"
        return None

    def instance_dict(obj: Any) -> Any:
        for klass in mro_of(type_(obj)):
            held = class_dict(klass)
            if "__dict__" in held:
                found = held["__dict__"]
                return found.__get__(obj) if type_(found) is GetSetDescriptorType else odd
        return None  # __slots__ only

    def lookup(obj: Any, name: str) -> tuple[bool, Any, Any]:
        """(a class is read, the class the name is found in, its entry) as Python finds it."""
        on_class = isinstance_(obj, type_type)
        for klass in mro_of(obj if on_class else type_(obj)):
            held = class_dict(klass)
            if name in held:
                return on_class, klass, held[name]
        return on_class, None, None

    def before(owner: Any, obj: Any, name: str) -> str | None:
        on_class, klass, entry = lookup(obj, name)
        problem = hooks(obj if on_class else type_(obj))
        if problem is not None:
            return problem
        if klass is None:  # no such attribute (and no hook serves one): AttributeError
            return None
        if klass is not owner or not written(entry):
            return f"the tests' {name!r} is not the class's own method"
        if on_class:
            for meta in mro_of(type_(obj)):
                if meta is not type_type and name in class_dict(meta):
                    return f"the metaclass serves the class's {name!r}"
            return None
        held = instance_dict(obj)
        if held is odd:
            return "the class makes its instances' __dict__ itself"
        if held is not None and has(held, name):
            stored = get(cached, id_(obj))
            mine = stored is not None and stored[0] is obj and stored[1] is get(held, name)
            if not (type_(entry) is cached_type and mine):
                return f"an instance's __dict__ shadows the method {name!r}"
        return None

    def after(owner: Any, obj: Any, name: str, result: Any) -> str | None:
        on_class, klass, entry = lookup(obj, name)
        caching = klass is owner and type_(entry) is cached_type and not on_class
        held = instance_dict(obj) if caching else None
        if caching and held is not odd and held is not None and get(held, name) is result:
            cached[id_(obj)] = (obj, result)  # what its own __get__ just stored
        problem = before(owner, obj, name)  # and nothing else changed while it ran
        if problem is not None or klass is None:
            return problem
        if caching:
            right = held is None or (has(held, name) and get(held, name) is result)
        else:
            right = _yields(entry, obj, on_class, result)
        return None if right else f"the tests' read of {name!r} yields another function"

    return hooks, before, after


def with_reads(
    guard: tuple[Any, Any, Any, dict[str, Any]],
    path: list[str],
    running: tuple[CodeType, ...],
    own_code: Callable[[Any, tuple[CodeType, ...]], CodeType | None],
) -> tuple[
    Callable[[dict[str, Any]], None],
    Callable[[str], None],
    Callable[[str], Exception],
    dict[str, Any],
    Callable[[Invoke], Invoke],
]:
    """`retrieved`'s guard (``pin``, ``check``, ``broken``, ``state``), its ``pin`` and
    ``check`` with the judged class's reads (`method_reads`): which
    class's methods the tests' reads must yield (the judged class's, or the judged method's
    class), its lookup hooks checked with the rest; ``reading(invoke)``: ``invoke`` with a read of a
    judged method's name checked before and after it (raising ``broken(problem)``)."""
    pin_name, check_name, broken, state = guard
    type_, str_, isinstance_, any_ = builtins.type, builtins.str, builtins.isinstance, builtins.any
    class_dict, read_op = builtins.type.__dict__["__dict__"].__get__, read_attribute
    hooks, read_before, read_after = method_reads(
        lambda value: (
            own_code(value, running) is not None
            or (state["mode"] == "ran" and value is state["pins"][2])
        )
    )
    # A class's judged reads: its methods' names (not its dunders, which Python looks up on
    # the type itself, never through the tests' reads; every object has an ``__init__``).
    methods = tuple(c.co_name for c in running if c.co_flags & FUNCTION and c.co_name[:2] != "__")
    reads: list[Any] = [None, ()]  # [the class whose judged methods' reads are checked, names]

    def pin(namespace: dict[str, Any]) -> None:
        pin_name(namespace)
        owner = namespace.get(path[0]) if len(path) > 1 else None
        for part in path[1:-1]:
            owner = class_dict(owner).get(part) if isinstance_(owner, type_) else None
        if state["mode"] == "class":
            reads[:] = [state["pins"][2], methods]
        elif isinstance_(owner, type_):
            reads[:] = [owner, (path[-1],)]

    def check(when: str) -> None:
        check_name(when)
        problem = None if reads[0] is None else hooks(reads[0])
        if problem is not None:
            raise broken(f"{problem} {when}")

    def reading(invoke: Invoke) -> Invoke:
        def checked(target: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
            name: Any = args[1] if target is read_op and len(args) == 2 else None
            judged = reads[0] is not None and type_(name) is str_
            if not (judged and any_(name == n for n in reads[1])):
                return invoke(target, args, kwargs)
            problem = read_before(reads[0], args[0], name)
            if problem is not None:
                raise broken(problem)
            result = invoke(target, args, kwargs)
            problem = read_after(reads[0], args[0], name, result)
            if problem is not None:
                raise broken(problem)
            return result

        return checked

    return pin, check, broken, state, reading


def _yields(
    entry: Any,
    obj: Any,
    on_class: bool,
    result: Any,
    *,
    type_: Any = type,
    kinds: tuple[Any, ...] = (FunctionType, staticmethod, classmethod, property),
) -> bool:
    """``result`` is what Python's lookup of the class's ``entry`` yields read of ``obj``."""
    kind = type_(entry)
    if kind is kinds[0]:
        return result is entry if on_class else _bound(result, entry, obj)
    if kind is kinds[1]:
        return bool(result is entry.__func__)
    if kind is kinds[2]:
        return _bound(result, entry.__func__, obj if on_class else type_(obj))
    if kind is kinds[3]:  # its getter ran: the definition's code, checked as calls are
        return not on_class or result is entry
    # Another: what the text's own decorators made (each call checked), a cached_property.
    return not on_class or result is entry


def _bound(result: Any, function: Any, owner: Any, type_: Any = type) -> bool:
    """``result`` is a bound method of ``function`` on ``owner``."""
    return type_(result) is MethodType and result.__func__ is function and result.__self__ is owner
