"""Whether what the tests call is the retrieved definition: the candidate's checks.

With module context the module's own code runs in the candidate process before and between the
tests, so nothing that code can reach decides what is judged. `watch` is called before any code
of the module runs: it finds the definition's code objects (`fingerprints`) in the very module
code object the import will execute, and takes every reference its checks use (builtins,
``sys`` functions) into closures then. After the import, ``pin`` refuses a name the module binds
to anything but the definition's own function (its code object, made in the module's globals
with Python's builtins, its defaults those the text writes; alone or under a standard-library
wrapper), the class the text defines with its methods, or what the text's own decorators made
of it (then each call through it must run the definition's code). Before
and after every operation of the tests it checks again: the name, the object's code and
defaults, the builtins the text reads (never replaced in ``builtins``, never rebound in the
module after the import), no trace or profile function; a profiler that removes itself once
the definition starts tells whether an operation ran it. ``report`` gives the judge what it
compares with its own compile. A judged method's class is checked where the tests read the
method (`method_reads`): what they get is its own function, however the class serves it.

A module that reaches the runner's own objects (frames, ``gc``, ``ctypes``) or writes on the
channel itself can still forge what the candidate says; see the package's threat model.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
import opcode
import sys
from collections.abc import Callable
from types import (
    AsyncGeneratorType,
    CodeType,
    CoroutineType,
    FrameType,
    FunctionType,
    GeneratorType,
    MethodType,
)
from typing import Any, cast

from .fingerprints import FUNCTION, definitions, fingerprint
from .method_reads import with_reads
from .retrieved_text import decorated_in, literal_defaults

__all__ = ["NotRetrieved", "watch"]


_MAX_PARTIALS = 64  # partial applications of a wrapper one job follows


class NotRetrieved(Exception):
    """What the tests would call is not (or no longer) the retrieved definition."""


Watch = tuple[
    Callable[[dict[str, Any]], None],  # pin(namespace): after the import
    Callable[[Any, list[Any], dict[str, Any]], Any],  # invoke(target, args, kwargs)
    Callable[[], dict[str, Any]],  # report(): what the judge compares
]


_Recognizer = tuple[
    Callable[[Any], tuple[Any, Any]],  # at_path(namespace): (the top object, the judged one)
    Callable[[Any], str | None],  # mode_of(value): "identity", "class", or None
    Callable[[Any], CodeType | None],  # code_of(value): the definition's code it runs, if known
    Callable[[Any], Any],  # function_of(value): the function under known wrappers, or None
    tuple[CodeType, ...],  # the definition's codes and its methods': what "ran" means
    list[Any],  # [the module's namespace], once pinned
    Callable[[Any, tuple[CodeType, ...]], CodeType | None],  # own_code(value, among)
]


def _recognizer(codes: tuple[CodeType, ...], path: list[str]) -> _Recognizer:
    """How `watch` knows the definition's own objects, from references taken at call time."""
    type_, any_, all_, isinstance_ = builtins.type, builtins.any, builtins.all, builtins.isinstance
    class_dict = builtins.type.__dict__["__dict__"].__get__  # never a metaclass's own __dict__
    method_types = (builtins.staticmethod, builtins.classmethod)
    property_type, cached_type = builtins.property, functools.cached_property
    # A class's own methods, by name: each must stay in its __dict__ with one of its codes (a
    # metaclass, a base's __init_subclass__ or a later assignment may swap one).
    methods: dict[str, tuple[CodeType, ...]] = {}
    for body in codes:
        for inner in body.co_consts:
            if type_(inner) is CodeType and inner.co_flags & FUNCTION and inner.co_name[0] != "<":
                methods[inner.co_name] = (*methods.get(inner.co_name, ()), inner)
    is_class = bool(codes) and all_(not c.co_flags & FUNCTION for c in codes)

    real_builtins = builtins.__dict__
    home: list[Any] = [None]  # the module's namespace, once pinned

    def function_of(value: Any) -> Any:
        """The function under ``value``'s wrappers of the standard library that run what they
        read (the class is looked up, never asked); None for anything else."""
        for _ in range(8):
            kind = type_(value)
            if kind is FunctionType:
                return value
            if kind in method_types:
                value = value.__func__
            elif kind is property_type:
                value = value.fget
            elif kind is cached_type:  # its __get__ calls what ``func`` holds then
                value = value.func
            else:  # lru_cache's __wrapped__ is only a label: it calls what it was given
                return None
        return None

    def own_code(value: Any, among: tuple[CodeType, ...]) -> CodeType | None:
        """The code object of ``value`` if it is one of ``among`` (`function_of`), made in the
        module's own globals with Python's own builtins."""
        function = function_of(value)
        if function is None:
            return None
        code = function.__code__
        made_here = function.__globals__ is home[0] and function.__builtins__ is real_builtins
        return code if made_here and any_(code is c for c in among) else None

    def mode_of(value: Any) -> str | None:
        if code_of(value) is not None:
            return "identity"
        if is_class and isinstance_(value, type_):
            held = [*class_dict(value).values()]
            if all_(any_(own_code(v, among) for v in held) for among in methods.values()):
                return "class"
        return None

    def at_path(namespace: Any) -> tuple[Any, Any]:
        home[0] = home[0] if home[0] is not None else namespace  # the first: `pin`'s
        top = value = namespace.get(path[0])
        for part in path[1:]:  # class levels by their own __dict__: never a descriptor run
            value = class_dict(value).get(part) if isinstance_(value, type_) else None
        return top, value

    def code_of(value: Any) -> CodeType | None:
        return own_code(value, codes)

    running = (*codes, *(c for group in methods.values() for c in group))
    return at_path, mode_of, code_of, function_of, running, home, own_code


_Guard = tuple[
    Callable[[dict[str, Any]], None],  # pin(namespace)
    Callable[[str], None],  # check(when)
    Callable[[str], NotRetrieved],  # broken(problem): noted for good, to raise
    dict[str, Any],  # the shared state: mode, broken, ran, depth, and the pins
]


def _guard(
    codes: tuple[CodeType, ...],
    path: list[str],
    recognizer: _Recognizer,
    active: list[Any],
    literals_match: Callable[[Any], bool],
    *,
    decorated: bool = False,
) -> _Guard:
    """`watch`'s binding of the name (``pin``) and the checks it repeats (``check``).

    ``decorated``: the retrieved text decorates the definition, so what its decorator makes
    (``@curry``: an object that says nothing of what it wraps) is what the text binds; it is
    taken as a wrapper whose every call must run the definition's code."""
    defaults_of = _defaults_of
    at_path, mode_of, _code_of, function_of, _running, _home, _own = recognizer
    callable_ = builtins.callable
    gettrace, getprofile = sys.gettrace, sys.getprofile
    name = ".".join(path)
    # pins: [namespace, the object under path[0], the object at the full path]
    state: dict[str, Any] = {"mode": None, "broken": None, "ran": False, "depth": 0, "pins": []}

    builtins_changed = _builtins_changed(codes)

    def pin(namespace: dict[str, Any]) -> None:
        top, value = at_path(namespace)
        changed = builtins_changed(namespace)
        if changed is not None:
            raise NotRetrieved(
                f"the module replaces the builtin {changed!r}, which the retrieved text uses,"
                " in builtins itself, so the text would not be judged as written"
            )
        state["mode"] = mode_of(value)
        # A wrapper of the text's own decorators (``@curry``, ``@functools.lru_cache``): each
        # call must run the definition's code. One the text does not write is the module's (it
        # may run the definition, then answer otherwise): refused.
        if state["mode"] is None and decorated and callable_(value):
            state["mode"] = "ran"
        if state["mode"] is None:
            raise NotRetrieved(
                f"the module binds {name!r} to"
                f" {'nothing' if value is None else 'something other than the definition'}"
                " (it is rebound after it), so the retrieved text would not be judged"
            )
        function = function_of(value) if state["mode"] == "identity" else None
        if function is not None and not literals_match(function):
            raise NotRetrieved(
                f"the module changed the defaults of {name!r} from those the retrieved text"
                " writes, so the text would not be judged as written"
            )
        # What the module may still change in place: the defaults, held as they are now.
        state["defaults"] = defaults_of(function)
        state["pins"] = [namespace, top, value]

    def broken(problem: str) -> NotRetrieved:
        if state["broken"] is None:
            state["broken"] = f"{problem}: the retrieved text is no longer what is judged"
        return NotRetrieved(state["broken"])

    def check(when: str) -> None:
        if state["broken"] is not None:
            raise NotRetrieved(state["broken"])
        hook = getprofile()
        if gettrace() is not None or not (hook is None or hook is active[0]):
            raise broken(f"a trace or profile function was set in the candidate {when}")
        pins = state["pins"]
        if pins:
            top, value = at_path(pins[0])
            if not (top is pins[1] and value is pins[2]):
                raise broken(f"the module rebound {name!r} {when}")
            if state["mode"] != "ran" and mode_of(value) != state["mode"]:
                raise broken(f"the code of {name!r} was replaced {when}")
            held = function_of(value) if state["mode"] == "identity" else None
            if defaults_of(held) != state["defaults"]:
                raise broken(f"the module changed the defaults of {name!r} {when}")
            changed = builtins_changed(pins[0])
            if changed is not None:
                raise broken(f"the module rebound {changed!r}, a builtin the text uses, {when}")

    return pin, check, broken, state


def _settler(
    path: list[str],
    state: dict[str, Any],
    check: Callable[[str], None],
    broken: Callable[[str], Exception],
) -> Callable[[Any, list[bool], list[Any]], None]:
    """``settle(target, seen, result)``, run after each outermost operation of the tests: what
    the profiler saw (``seen``), whether a call through a wrapper ran the definition, and the
    checks again."""
    type_, bound_method, any_, len_ = builtins.type, MethodType, builtins.any, builtins.len
    callable_, lru_type = builtins.callable, functools._lru_cache_wrapper
    # What a call through the wrapper gave back without running the definition, when that is
    # itself callable: a partial application (``@curry``), held to the same rule in turn.
    partials: list[Any] = []

    def settle(target: Any, seen: list[bool], result: list[Any]) -> None:
        """After an outermost operation: what the profiler saw, and the checks again."""
        if not seen[1]:
            raise broken("a profile function was set in the candidate during a call")
        state["ran"] = state["ran"] or seen[0]
        pins = state["pins"]
        wrapper = pins[2] if pins and state["mode"] == "ran" else None
        through = wrapper is not None and any_(
            target is made or (type_(target) is bound_method and target.__func__ is made)
            for made in [wrapper, *partials]
        )
        through = through and type_(wrapper) is not lru_type  # a cache hit runs nothing
        if through and not seen[0]:
            if not (result and callable_(result[0]) and len_(partials) < _MAX_PARTIALS):
                name = ".".join(path)
                raise broken(f"a call of what the module made of {name!r} ran none of it")
            partials.append(result[0])
        check("during a call")

    return settle


def watch(module_code: CodeType, judged: dict[str, Any], text: str) -> Watch:
    """The candidate's checks for the definition ``judged`` names in ``module_code``, whose
    retrieved ``text`` is the candidate's code (called before any code of the module runs; see
    the module docstring).

    ``pin`` raises `NotRetrieved` when the name is bound to something else; ``invoke`` runs one
    operation of the tests (``target(*args, **kwargs)``) and raises it when a check fails before,
    during or after it (and from then on); ``report`` says what the judge compares.
    """
    # Everything the checks use, taken now: the module may replace any of these names later.
    codes = tuple(definitions(module_code, judged))
    prints = sorted({fingerprint(code) for code in codes})
    print_of, str_ = fingerprint, builtins.str
    path = str(judged.get("name", "")).split(".")
    recognizer = _recognizer(codes, path)
    _at_path, _mode_of, code_of, _function_of, running, home, own_code = recognizer
    profiled, active = _profiled(running, home)
    literals = literal_defaults(text, path[-1])
    decorated = decorated_in(text, path[-1])
    guard = _guard(codes, path, recognizer, active, literals, decorated=decorated)
    pin, check, broken, state, reading = with_reads(guard, path, running, own_code)

    def invoke(target: Any, args: list[Any], kwargs: dict[str, Any]) -> Any:
        check("before a call")
        if state["depth"]:  # the judge's request while the candidate waits on a callback:
            state["depth"] += 1  # the outer call's profiler (if still waiting) sees it too
            try:
                return target(*args, **kwargs)
            finally:
                state["depth"] -= 1
                check("during a call")
        seen = [False, True]  # the definition's code ran; our profiler was left alone
        state["depth"] = 1
        result: list[Any] = []
        try:
            result.append(profiled(target, args, kwargs, seen))
            return result[0]
        finally:
            state["depth"] = 0
            settle(target, seen, result)

    settle = _settler(path, state, check, broken)

    def report() -> dict[str, Any]:
        """``found``: the fingerprints of the definition's code objects as compiled; ``bound``:
        of the code the name's object holds (None for a class or a wrapper); ``ran``: whether
        any operation of the tests ran the definition's code; ``broken``: a failed check."""
        said = {"found": prints, "bound": None, "mode": state["mode"], "ran": state["ran"]}
        try:
            check("before the report")
        except NotRetrieved as exc:
            return {**said, "broken": str_(exc)}
        pins = state["pins"]
        code = code_of(pins[2]) if pins and state["mode"] == "identity" else None
        bound = None if code is None else print_of(code)
        return {**said, "bound": bound, "broken": None}

    return pin, reading(invoke), report


def _defaults_of(function: Any, tuple_: Any = tuple) -> Any:
    """A function's defaults as objects (compared by identity; None for no function)."""
    if function is None:
        return None
    keywords = function.__kwdefaults__
    return (function.__defaults__, keywords, None if keywords is None else tuple_(keywords.items()))


def _builtins_changed(codes: tuple[CodeType, ...]) -> Callable[[dict[str, Any]], str | None]:
    """``changed(namespace)``: a builtin the code objects read as a global that was replaced in
    ``builtins`` itself, or that the module's namespace binds to something other than it did
    the first time it was asked (at the pin, after the import); None if none.

    What the module binds under a builtin's name at import (its own ``filter``, its
    ``__name__``) is its context: the text runs with it in the package too, so it is judged
    with it. Swapping it afterwards, between the tests' operations, is not."""
    reads = _builtin_reads(codes)  # {name: the builtin, now}
    real_builtins = builtins.__dict__
    seen: dict[str, Any] = {}

    def changed(namespace: dict[str, Any]) -> str | None:
        if not seen:
            seen.update((read, namespace.get(read, original)) for read, original in reads.items())
        for read, original in reads.items():
            if (
                real_builtins.get(read) is not original
                or namespace.get(read, original) is not (seen[read])
            ):
                return read
        return None

    return changed


def _builtin_reads(codes: tuple[CodeType, ...]) -> dict[str, Any]:
    """The builtins the code objects (and those nested in them) read as globals, with their
    objects now (`_builtins_changed` watches them)."""
    load_global, extended = opcode.opmap["LOAD_GLOBAL"], opcode.EXTENDED_ARG
    shift = 1 if sys.version_info >= (3, 11) else 0  # 3.11+: the name index is oparg >> 1
    reads: dict[str, Any] = {}
    stack = list(codes)
    while stack:
        code = stack.pop()
        stack.extend(c for c in code.co_consts if isinstance(c, CodeType))
        raw, extra = code.co_code, 0
        for at in range(0, len(raw), 2):
            op, arg = raw[at], raw[at + 1] | extra
            extra = arg << 8 if op == extended else 0
            if op == load_global:
                read = code.co_names[arg >> shift]
                if read in builtins.__dict__:
                    reads[read] = builtins.__dict__[read]
    return reads


def _profiled(
    running: tuple[CodeType, ...], home: list[Any]
) -> tuple[Callable[[Any, list[Any], dict[str, Any], list[bool]], Any], list[Any]]:
    """``call(target, args, kwargs, seen)``: ``target(*args, **kwargs)`` under a profile
    function that notes (``seen[0]``) the first start of one of ``running`` (in the module's own
    globals, ``home[0]``, with Python's builtins: never a copy made over others) and then removes
    itself (the rest runs at full speed); ``seen[1]`` false if something else replaced it. And
    the one-item list holding that profile function while it waits (for `watch`'s checks)."""
    type_, any_, frame_type = builtins.type, builtins.any, FrameType
    getprofile, setprofile, real_builtins = sys.getprofile, sys.setprofile, builtins.__dict__
    made_frame, compile_, eval_ = _made_frame, builtins.compile, builtins.eval
    active: list[Any] = [None]
    # The frame that calls the definition has the module's globals, as a doctest run in the
    # module's namespace has: code that looks at its caller's module (boltons' make_sentinel
    # wants it in sys.modules) sees the package, never the hidden runner. It reads no global.
    trampoline: list[Any] = [None, None]  # [the namespace it was made in, the function]

    def caller() -> Any:
        if trampoline[0] is not home[0]:
            code = compile_("lambda f, a, k: f(*a, **k)", "<guardrail call>", "eval")
            trampoline[:] = [home[0], eval_(code, home[0])]
        return trampoline[1]

    def call(target: Any, args: list[Any], kwargs: dict[str, Any], seen: list[bool]) -> Any:
        def ours(frame: Any) -> bool:
            return (
                type_(frame) is frame_type
                and any_(frame.f_code is c for c in running)
                and frame.f_globals is home[0]
                and frame.f_builtins is real_builtins
            )

        def profiler(frame: Any, event: str, arg: Any) -> None:
            if event == "call" and ours(frame):
                seen[0] = True
                active[0] = None
                setprofile(None)

        through = caller() if home[0] is not None else None
        active[0] = profiler
        setprofile(profiler)
        try:
            result = target(*args, **kwargs) if through is None else through(target, args, kwargs)
            # A generator of ours is made now and runs in later requests.
            seen[0] = seen[0] or ours(made_frame(result))
            return result
        finally:
            seen[1] = getprofile() is active[0]
            setprofile(None)
            active[0] = None

    return call, active


def _made_frame(
    result: object,
    type_: Any = type,
    kinds: tuple[Any, ...] = (GeneratorType, CoroutineType, AsyncGeneratorType),
    managers: tuple[Any, ...] = (
        contextlib._GeneratorContextManager,
        contextlib._AsyncGeneratorContextManager,
    ),
    instance_dict: Any = object.__getattribute__,
) -> Any:
    """The frame of a generator, coroutine or async generator (calling a function of ours makes
    one and runs none of its code yet), also inside what ``@contextlib.contextmanager`` makes of
    one; None for anything else. Read through the exact types (defaults bound at import, before
    any candidate code): an object's own attributes are never asked."""
    kind = type_(result)
    if kind in managers:
        result = instance_dict(result, "__dict__").get("gen")
        kind = type_(result)
    if kind is kinds[0]:
        return cast("GeneratorType[Any, Any, Any]", result).gi_frame
    if kind is kinds[1]:
        return cast("CoroutineType[Any, Any, Any]", result).cr_frame
    if kind is kinds[2]:
        return cast("AsyncGeneratorType[Any, Any]", result).ag_frame
    return None
