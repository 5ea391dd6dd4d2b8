"""The judge's view of what lives in the candidate, and what of the judge the candidate may use.

`RemoteHandle` stands for a candidate object (a generator, an instance, a function, a module): it
forwards iteration, calls, attributes, items, length and membership through the channel, one
request each (never prefetched: laziness is the candidate's), except where the judge's own
consumer will exhaust an iterator anyway (``list(h)``, ``tuple``, ``sorted``, ``str.join``: they
ask ``__length_hint__`` first), whose items then come in chunks (``Calls.drain``). It never
decides anything the judge compares: equality, ordering, hash, truth value,
arithmetic and any other operation raise the judge's non-sticky ``unserialisable`` fault (never a
TypeError, which would make a correct candidate ``failed``), and so do ``repr``/``str``/``format``
except while a doctest example displays the object, where doctest compares the object's own text
(`showing`). A hostile object's ``__eq__`` is never consulted.
What it answers to the questions the test asks it (a method's result, ``len``, ``x in h``) is
its answer, as any function's result is; the judge compares those answers as plain data.

Type questions are answered by the candidate's classes, or not at all. A handle's description
names its class, which the judge stands for by one `RemoteClass` per candidate class (a class
the candidate returns is that same stand-in): ``type(a) is type(b)`` and ``type(a) ==
type(b)`` hold exactly when the candidate's classes are one, ``callable(h)`` is true exactly when
the candidate's class defines ``__call__`` (the candidate's word about its own object: a lie
changes only the answer about that object, as a ``__call__`` that raises would), calling the
class or reading its attributes goes to the candidate, and ``isinstance``/``issubclass`` against
a candidate class are asked of the candidate (the answer must be a bool). ``h.__class__`` and so
``isinstance(h, X)`` for a judge class ``X`` (``list``, an ABC, the test's own class) raise the
fault: the judge cannot relate a candidate class to its own, and a silent False would fail an
honest candidate. Residual risks: ``type(h) is X`` for a judge class ``X`` is False (a generator
is not the judge's ``GeneratorType``), and a class's attributes the judge's stand-in defines
itself (``__name__``, ``__qualname__``, ``__init__``) are the stand-in's; the candidate's copy of
an argument a live object keeps does not follow later changes of the test's object
(``handles.Server.call``).

The judge's own objects the candidate may run are `judge_objects`'.

`Names` is the tests' ``__builtins__``: real builtins first, then a name the tests read but do
not bind resolves to the candidate's global of that name (doctest semantics: examples see their
module's globals), and ``import`` of a package shipped in the job's context gives remote modules.
"""

from __future__ import annotations

import builtins
import decimal
import fractions
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from . import showing
from .codec import MUTABLE

if TYPE_CHECKING:
    from .calls import Calls

# The exact types the codec sends as data: a candidate object of one of them is never a handle.
_PLAIN_TYPES: tuple[type, ...] = (type(None), bool, int, float, complex, str, bytes, tuple)
_PLAIN_TYPES += (frozenset, range, slice, *MUTABLE, decimal.Decimal, fractions.Fraction)


class RemoteHandle:
    """A candidate object, driven through the channel (see the module docstring)."""

    __slots__ = ("__judge", "__ref", "__weakref__")

    def __init__(self, judge: Calls, ref: dict[str, Any]) -> None:
        object.__setattr__(self, "_RemoteHandle__judge", judge)
        object.__setattr__(self, "_RemoteHandle__ref", ref)

    @property  # type: ignore[misc]  # read by isinstance: see the module docstring
    def __class__(self) -> Any:
        _judge_of(self).fail(
            "unserialisable",
            "the class of a candidate object, or isinstance against a class of the judge's: the"
            " judge cannot relate the candidate's classes to its own",
            sticky=False,
        )

    def __instancecheck__(self, instance: Any) -> bool:  # isinstance(x, <a candidate object>)
        return _judge_of(self).ask_bool("isinstance", instance, self)

    def __subclasscheck__(self, subclass: Any) -> bool:
        return _judge_of(self).ask_bool("issubclass", subclass, self)

    def __getattr__(self, name: str) -> Any:
        return self.__judge.operate("getattr", self.__ref, name)

    def __setattr__(self, name: str, value: Any) -> None:
        self.__judge.operate("setattr", self.__ref, name, value)

    def __getitem__(self, key: Any) -> Any:
        return self.__judge.operate("getitem", self.__ref, key)

    def __setitem__(self, key: Any, value: Any) -> None:
        self.__judge.operate("setitem", self.__ref, key, value)

    def __delitem__(self, key: Any) -> None:
        self.__judge.operate("delitem", self.__ref, key)

    def __iter__(self) -> Any:
        return self.__judge.operate("iter", self.__ref)

    def __next__(self) -> Any:
        return self.__judge.next_of(self.__ref)

    def __length_hint__(self) -> Any:
        # Asked by list(), tuple(), sorted(), str.join() and list.extend() of the iterable they
        # are about to exhaust: the candidate then sends its items in chunks (``Calls.drain``).
        return self.__judge.drain(self.__ref)

    def __len__(self) -> int:
        length = self.__judge.operate("len", self.__ref)
        if type(length) is not int or length < 0:
            self.__judge.fail("protocol_violation", "a length that is not a count")
        return int(length)

    def __contains__(self, item: Any) -> bool:
        answer = self.__judge.operate("contains", self.__ref, item)
        if type(answer) is not bool:
            self.__judge.fail("protocol_violation", "a membership answer that is not a bool")
        return answer is True


def _refusal(name: str) -> Callable[..., Any]:
    def refuse(handle: Any, *_args: Any, **_kwargs: Any) -> Any:
        _judge_of(handle).fail(
            "unserialisable",
            f"{name} of a candidate object: a handle never decides an equality, a hash, a truth"
            " value, a text or any other operation in the judge",
            sticky=False,
        )

    refuse.__name__ = name
    return refuse


# Every operation a handle must not decide, or that has no remote form: refused, not a TypeError.
REFUSED_OPERATIONS = (  # noqa: SIM905 - a table of words reads better than 76 lines of quotes
    "eq ne lt le gt ge hash bool repr str format bytes int float complex index round trunc floor"
    " ceil neg pos abs invert add sub mul matmul truediv floordiv mod divmod pow lshift rshift and"
    " xor or radd rsub rmul rmatmul rtruediv rfloordiv rmod rdivmod rpow rlshift rrshift rand"
    " rxor ror iadd isub imul imatmul itruediv ifloordiv imod ipow ilshift irshift iand ixor ior"
    " reversed enter exit aenter aexit await aiter anext fspath dir sizeof copy deepcopy reduce"
    " reduce_ex"
).split()
for _name in REFUSED_OPERATIONS:
    setattr(RemoteHandle, f"__{_name}__", _refusal(f"__{_name}__"))


def _shown(name: str) -> Callable[..., Any]:
    """``repr``/``str``/``format`` of a candidate object: the candidate's own text while a
    doctest example displays it (`showing`), refused everywhere else."""
    refuse = _refusal(name)

    def show(value: Any, *args: Any) -> Any:
        if not showing.permitted():
            return refuse(value)
        return _judge_of(value).shown_text(name.strip("_"), reference_of(value), *args)

    show.__name__ = name
    return show


for _name in ("__repr__", "__str__", "__format__"):
    setattr(RemoteHandle, _name, _shown(_name))


class RemoteCallable(RemoteHandle):
    """A candidate object whose class defines ``__call__``: ``callable(h)`` is true."""

    __slots__ = ()

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        judge: Calls = object.__getattribute__(self, "_RemoteHandle__judge")
        return judge.call(reference_of(self), args, kwargs)


def _forwarded(name: str) -> Any:
    """An attribute the judge's own classes would answer, asked of the candidate instead."""
    return property(lambda proxy: _judge_of(proxy).operate("getattr", reference_of(proxy), name))


class RemoteClass(type):
    """The judge's stand-in for one candidate class (see the module docstring)."""

    def __new__(mcs, name: str, bases: tuple[type, ...], namespace: dict[str, Any]) -> RemoteClass:
        for base in bases:  # a test's ``class Mine(CandidateClass)``: never a stand-in's heir
            if type(base) is RemoteClass:
                _judge_of(base).fail(
                    "unserialisable",
                    "a test's subclass of a candidate class: its instances would be the"
                    " candidate's, made without the subclass's own code",
                    sticky=False,
                )
        made: RemoteClass = super().__new__(mcs, name, bases, namespace)
        return made

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        return _judge_of(cls).call(reference_of(cls), args, kwargs)

    def __getattr__(cls, name: str) -> Any:
        return _judge_of(cls).operate("getattr", reference_of(cls), name)

    def __eq__(cls, other: object) -> bool:
        if type(other) is RemoteClass:
            return cls is other
        if any(other is kind for kind in _PLAIN_TYPES):  # those cross as data, never as handles
            return False
        return _refusal("__eq__")(cls)  # type: ignore[no-any-return]  # it raises

    def __ne__(cls, other: object) -> bool:
        return not RemoteClass.__eq__(cls, other)

    __hash__ = type.__hash__
    # What the stand-in would answer itself (the judge's own class layout), the candidate's:
    __doc__ = _forwarded("__doc__")
    __module__ = _forwarded("__module__")
    __mro__ = _forwarded("__mro__")
    __bases__ = _forwarded("__bases__")
    __base__ = _forwarded("__base__")
    __dict__ = _forwarded("__dict__")  # type: ignore[misc]

    def __instancecheck__(cls, instance: Any) -> bool:
        return _judge_of(cls).ask_bool("isinstance", instance, cls)

    def __subclasscheck__(cls, subclass: Any) -> bool:
        return _judge_of(cls).ask_bool("issubclass", subclass, cls)

    def __subclasses__(cls) -> Any:  # the candidate's answer
        return _judge_of(cls).operate("getattr", reference_of(cls), "__subclasses__")()


for _name in REFUSED_OPERATIONS:
    if f"__{_name}__" not in vars(RemoteClass):  # bool, order...: never the judge's
        setattr(RemoteClass, f"__{_name}__", _refusal(f"__{_name}__"))
for _name in ("__repr__", "__str__", "__format__"):
    setattr(RemoteClass, _name, _shown(_name))


def remote_class(
    judge: Calls, ident: int, name: str, calls: bool, *, binds: bool = False
) -> RemoteClass:
    """A new stand-in for the candidate class ``ident`` (``calls``: its instances are callable;
    ``binds``: they are descriptors, as a decorator's method wrapper is)."""
    base = RemoteCallable if calls else RemoteHandle
    namespace: dict[str, Any] = {
        "__slots__": (),
        "_RemoteClass__judge": judge,
        "_RemoteClass__ref": {"handle": ident},
        "__doc__": _forwarded("__doc__"),  # an instance's, from the candidate
        "__module__": _forwarded("__module__"),
    }
    if binds:
        # Kept as an attribute of a test's class (``@cachedmethod('cache')`` on a test method),
        # it would bind to the test's instance in-process; the test's instance cannot cross.
        namespace["__get__"] = _refusal("__get__ (binding a candidate descriptor)")
    return RemoteClass(name, (base,), namespace)


def global_reference(judge: Calls, name: str) -> RemoteCallable:
    """A callable that names the candidate's global ``name``, asked for at each call."""
    proxy: RemoteCallable = object.__new__(RemoteCallable)
    RemoteHandle.__init__(proxy, judge, {"global": name})
    return proxy


def is_remote(value: object) -> bool:
    kind = type(value)  # never ``in`` a tuple: a stand-in class's ``==`` is refused
    return kind is RemoteClass or kind is RemoteCallable or isinstance(kind, RemoteClass)


def reference_of(value: Any) -> dict[str, Any]:
    if type(value) is RemoteClass:
        ref: dict[str, Any] = type.__getattribute__(value, "_RemoteClass__ref")
    else:
        ref = object.__getattribute__(value, "_RemoteHandle__ref")
    return ref


def _judge_of(value: Any) -> Calls:
    if type(value) is RemoteClass:
        judge: Calls = type.__getattribute__(value, "_RemoteClass__judge")
    else:
        judge = object.__getattribute__(value, "_RemoteHandle__judge")
    return judge


class Names(dict[str, Any]):
    """The tests' ``__builtins__`` (see the module docstring)."""

    def __init__(self, lookup: Callable[[str], Any], own: set[str]) -> None:
        super().__init__(vars(builtins))
        self.lookup = lookup
        self.own = own  # names the setup and tests bind: theirs, never the candidate's

    def __missing__(self, name: str) -> Any:
        if name in self.own or (name.startswith("__") and name.endswith("__")):
            raise NameError(f"name {name!r} is not defined", name=name)
        return self.lookup(name)
