"""Inputs to ask candidates about: `Probe` and `generate_probes`. Pure host code: nothing runs.

When several candidates pass the tests given, the gate runs them on more inputs and asks about
one on which they disagree (`guardrail.questions`). The inputs come, in this order, from:

1. ``test`` (`guardrail.probe_seeds`): calls of the spec's entry point in its tests (and in
   the doctest examples the tests carry) whose arguments are all constants: literals, names the
   setup or an earlier statement bound to one, and pure expressions of them (``2**40 - 1``,
   ``list(range(10))``: `guardrail.constants`; nothing is run);
2. ``doctest``: such calls in the ``>>>`` examples of the candidates' docstrings (a literal
   call needs no earlier example; a candidate bound under another name calls that name);
3. ``mutation``: each argument of those calls edited once (`guardrail.probe_values.mutations`),
   and each number argument set to another argument (a number, or a length) and one either
   side of it, an argument set equal to another of its type; each argument moved to and
   around the constants of the candidates' code (`guardrail.probe_code`: ``< 255`` gives
   254, 255, 256; constants only some candidates have first); an empty argument given values
   of its type from the other calls and the parameter's annotation; taken round-robin over
   the calls and their arguments so every one gets edited within the cap; each parameter a
   call leaves to its default passed, set to the default's edits; an argument set to a member
   of a container argument (an element, a key, a character: ``in``, ``.get`` and index bugs
   show only then), also of the container's first edits; then, while the cap allows, two
   arguments edited at once. A range argument of 1-2 (``f(range(5))``, no literal text to
   probe with) is probed as its list, and edited as one;
4. ``type-hint``: only when 1-2 found no argument to edit, example values of the candidates'
   parameter annotations (``int``, ``str``, ``list[int]``, ``dict[str, int] | None``...), one
   parameter varied at a time;
5. ``guess``: only when nothing above gave a single probe (no literal call, no usable
   annotation: most untyped library code), small values of the common kinds (a list, an int,
   a string, empty ones, None...) for each unannotated required parameter, one varied at a time.

Deterministic for a given seed (it only varies a few "larger" numbers), deduplicated, capped.
A probe's arguments are literal source texts or pure functions' (`guardrail.probe_functions`:
a lambda of the tests that can only compute from its arguments), checked when a `Probe` is built
(also from JSON), so a probe's call is data to paste, never code that could do something else.
"""

from __future__ import annotations

import ast
import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from guardrail.constants import NotConstantError, constant_value
from guardrail.probe_code import code_constants, constant_edits
from guardrail.probe_functions import is_pure_function
from guardrail.probe_seeds import Call, doctest_calls, parsed, test_calls
from guardrail.probe_values import hint_values, literal_text, mutations
from guardrail.sandbox.runner.observing import OBSERVER
from guardrail.sandbox.runner.static import plausible_functions
from guardrail.settling import settled_call
from guardrail.spec import Spec

__all__ = ["Probe", "call_probe", "generate_probes"]

Origin = Literal["test", "doctest", "mutation", "type-hint", "guess"]
# What an unannotated required parameter is tried with when nothing else says (origin ``guess``):
# small values of the common kinds, a sequence first (most near-clones of real libraries take
# one: itertools-style code has neither literal doctest calls nor annotations).
_GUESSES: tuple[Any, ...] = ([3, 1, 2], 2, "abc", 0, [], -1, "", [1, 1], (1, 2), {"a": 1}, None)
_Function = ast.FunctionDef | ast.AsyncFunctionDef
_MUTATIONS_PER_ARGUMENT = 22
_PAIRED = 5  # mutations of each argument crossed in two-argument edits
_MEMBER_EDITS = 2  # edits of a container whose members are also tried as another argument


class Probe(BaseModel):
    """One input to call the entry point with: literal (or pure function) source texts, ready to
    paste."""

    model_config = ConfigDict(frozen=True)

    entry_point: str
    args: tuple[str, ...] = ()
    kwargs: tuple[tuple[str, str], ...] = ()
    origin: Origin

    @field_validator("entry_point")
    @classmethod
    def _identifier(cls, value: str) -> str:
        if not value.isidentifier():
            raise ValueError(f"entry point {value!r} is not a Python identifier")
        return value

    @field_validator("args")
    @classmethod
    def _literal_args(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for text in value:
            _check_literal(text)
        return value

    @field_validator("kwargs")
    @classmethod
    def _literal_kwargs(cls, value: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
        for name, text in value:
            if not name.isidentifier():
                raise ValueError(f"keyword {name!r} is not a Python identifier")
            _check_literal(text)
        return value

    @property
    def call(self) -> str:
        """The call as source: ``f(3, 'ab', k=[1, 2])``."""
        parts = [*self.args, *(f"{name}={text}" for name, text in self.kwargs)]
        return f"{self.entry_point}({', '.join(parts)})"

    @property
    def test(self) -> str:
        """The probe test the judge runs on the entry point (`test_of`)."""
        return self.test_of(self.entry_point)

    def test_of(self, expression: str) -> str:
        """The probe test calling ``expression`` (trusted text: a name, or the audit's callee)
        on this input: the judge records what the call gave, settled (`guardrail.settling`:
        the spec needs `SETTLE_SETUP` in its setup), and what became of the mutable arguments
        it passed (`runner.observing`)."""
        parts = [*self.args, *(f"{name}={text}" for name, text in self.kwargs)]
        return f"{OBSERVER}({', '.join([settled_call(expression), *parts])})"


def _check_literal(text: str) -> None:
    """A literal as the gate writes it (its ``repr``: no comment, no stray text an LLM would
    read), or a pure function's canonical text."""
    if is_pure_function(text):
        return  # a callable that can only compute from its arguments
    try:
        canonical = repr(ast.literal_eval(text)) == text
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        canonical = False
    if not canonical:
        raise ValueError(
            f"probe argument {text[:100]!r} is not a Python literal nor a pure function"
        )


def generate_probes(
    spec: Spec, codes: Sequence[str], *, limit: int = 40, seed: int = 0
) -> list[Probe]:
    """Up to ``limit`` distinct probes of ``spec.entry_point`` (see the module docstring)."""
    if limit <= 0:
        return []
    rng = random.Random(seed)  # noqa: S311 - varied inputs, not secrets
    trees = [tree for tree in map(parsed, codes) if tree is not None]
    probes: dict[tuple[Any, ...], Probe] = {}

    def add(call: Call, origin: Origin) -> None:
        probe = call_probe(spec.entry_point, call, origin)
        if probe is not None and len(probes) < limit:
            probes.setdefault((probe.args, probe.kwargs), probe)

    seeds = [(call, "test") for call in test_calls(spec)]
    seeds += [(call, "doctest") for tree in trees for call in doctest_calls(tree, spec)]
    seeds = [(_listed(call), origin) for call, origin in seeds]
    for call, origin in seeds:
        add(call, origin)  # type: ignore[arg-type]  # the two literals above
    functions = [_function(tree, spec.entry_point) for tree in trees]
    constants = code_constants(trees)
    calls = [call for call, _ in seeds]
    groups = [
        group
        for call in calls
        for index in _positions(call)
        for group in (
            _edits(call, index, rng),
            _replaced(call, index, constant_edits(_argument(call, index), constants)),
            _replaced(call, index, _alike(call, index, calls, functions)),
        )
    ]
    groups += [_related(call) for call, _ in seeds]
    groups += [_equalled(call) for call, _ in seeds]
    groups += [_defaults_edited(call, functions, rng) for call, _ in seeds]
    groups += [_members(call, rng) for call, _ in seeds]
    pairs = [
        _pair_edits(call, first, second, rng)
        for call, _ in seeds
        for first, second in itertools.combinations(_positions(call), 2)
    ]
    for edited in itertools.chain(_round_robin(groups), _round_robin(pairs)):
        if len(probes) >= limit:
            break
        add(edited, "mutation")
    if not groups:  # no literal argument to edit: the annotations say what to try
        for tree in trees:
            for call in _hinted_calls(_function(tree, spec.entry_point)):
                add(call, "type-hint")
    if not probes:  # nothing at all: guess values of common kinds for unannotated parameters
        for tree in trees:
            for call in _hinted_calls(_function(tree, spec.entry_point), guess=True):
                add(call, "guess")
    return list(probes.values())


def call_probe(entry_point: str, call: Call, origin: Origin) -> Probe | None:
    """The probe of a constant call (`guardrail.probe_seeds`); None when an argument has no
    literal text."""
    args, kwargs = call
    texts = [literal_text(value) for value in args]
    named = [(name, literal_text(value)) for name, value in kwargs]
    if any(text is None for text in texts) or any(text is None for _, text in named):
        return None
    return Probe(
        entry_point=entry_point,
        args=tuple(t for t in texts if t is not None),
        kwargs=tuple((n, t) for n, t in named if t is not None),
        origin=origin,
    )


def _listed(call: Call) -> Call:
    """``call`` with each range argument (``f(range(5))``, which has no literal text to probe
    with) as its list: code that indexes, slices or iterates what it is given takes either."""
    args, kwargs = call

    def listed(value: Any) -> Any:
        return list(value) if type(value) is range else value

    return [listed(v) for v in args], [(n, listed(v)) for n, v in kwargs]


def _members(call: Call, rng: random.Random) -> Iterator[Call]:
    """``call`` with an argument set to a member of a container argument (an element, a key,
    a character; the first and last, of the container as given and of its first edits), when
    the member has the argument's type: ``in``, ``.get`` and index bugs show only on a value
    the container holds."""
    containers = [
        p for p in _positions(call) if type(_argument(call, p)) in (list, tuple, dict, set, str)
    ]
    for held in containers:
        given = _argument(call, held)
        edits = itertools.islice((v for v in mutations(given, rng) if v), _MEMBER_EDITS)
        for container in [given, *edits]:
            edited = next(_replaced(call, held, iter([container])))
            members = list(container)
            for other in _positions(call):
                current = _argument(call, other)
                if other == held:
                    continue
                alike = [m for m in members if type(m) is type(current) and m != current]
                yield from _replaced(edited, other, iter(alike[:1] + alike[-1:]))


def _positions(call: Call) -> list[int | str]:
    args, kwargs = call
    return [*range(len(args)), *(name for name, _ in kwargs)]


def _argument(call: Call, position: int | str) -> Any:
    args, kwargs = call
    return args[position] if isinstance(position, int) else dict(kwargs)[position]


def _edits(call: Call, position: int | str, rng: random.Random) -> Iterator[Call]:
    """``call`` with the argument at ``position`` replaced by each of its mutations."""
    values = mutations(_argument(call, position), rng)
    return _replaced(call, position, itertools.islice(values, _MUTATIONS_PER_ARGUMENT))


def _replaced(call: Call, position: int | str, values: Iterator[Any]) -> Iterator[Call]:
    """``call`` with the argument at ``position`` replaced by each of ``values``."""
    args, kwargs = call
    for value in values:
        if isinstance(position, int):
            yield [*args[:position], value, *args[position + 1 :]], kwargs
        else:
            yield args, [(n, value if n == position else v) for n, v in kwargs]


def _alike(
    call: Call,
    position: int | str,
    calls: Sequence[Call],
    functions: Sequence[_Function | None],
) -> Iterator[Any]:
    """Values of the argument's type from elsewhere, for an empty one (``[]``, ``''``, ``{}``),
    whose mutations cannot copy an element: the same argument in the other calls (tests,
    doctests), then examples of the parameter's annotation in each candidate."""
    current = _argument(call, position)
    if not isinstance(current, str | bytes | list | tuple | dict | set) or current:
        return
    for other in calls:
        if other is not call and _has(other, position):
            value = _argument(other, position)
            if _same_kind(value, current) and value:
                yield value
    for function in functions:
        for value in hint_values(_annotation(function, position)):
            if _same_kind(value, current) and value:
                yield value


def _same_kind(value: Any, other: Any) -> bool:
    return type(value) is type(other)


def _has(call: Call, position: int | str) -> bool:
    args, kwargs = call
    return position < len(args) if isinstance(position, int) else position in dict(kwargs)


def _annotation(function: _Function | None, position: int | str) -> ast.expr | None:
    """The annotation of the parameter an argument at ``position`` binds, if any."""
    if function is None:
        return None
    signature = function.args
    positional = [*signature.posonlyargs, *signature.args]
    if isinstance(position, int):
        return positional[position].annotation if position < len(positional) else None
    named = {p.arg: p for p in [*signature.args, *signature.kwonlyargs]}
    return named[position].annotation if position in named else None


def _defaults_edited(
    call: Call, functions: Sequence[_Function | None], rng: random.Random
) -> Iterator[Call]:
    """``call`` with a parameter it leaves to its default passed by keyword, set to each edit
    of that default (or, for a ``None`` default, to examples of its annotation): a bug in how
    an optional argument is used never shows while the tests leave it out."""
    args, kwargs = call
    given = {name for name, _ in kwargs}
    seen: set[str] = set()
    for function in functions:
        if function is None:
            continue
        signature = function.args
        positional = [*signature.posonlyargs, *signature.args]
        defaulted = list(
            zip(
                positional[len(positional) - len(signature.defaults) :],
                signature.defaults,
                strict=True,
            )
        )
        defaulted += [
            (p, d) for p, d in zip(signature.kwonlyargs, signature.kw_defaults, strict=True) if d
        ]
        for parameter, default in defaulted:
            name = parameter.arg
            if name in given or name in seen or parameter in signature.posonlyargs:
                continue
            if parameter in positional and positional.index(parameter) < len(args):
                continue
            seen.add(name)
            try:
                value = constant_value(default, {})
            except NotConstantError:
                continue
            values = list(itertools.islice(mutations(value, rng), _MUTATIONS_PER_ARGUMENT))
            for variant in values if value is not None else hint_values(parameter.annotation):
                if variant is not None or value is not None:
                    yield args, [*kwargs, (name, variant)]


def _pair_edits(
    call: Call, first: int | str, second: int | str, rng: random.Random
) -> Iterator[Call]:
    """``call`` with two arguments edited at once (their first few mutations crossed): bugs
    that only show when, say, the list is short and the size small."""
    for edited in itertools.islice(_edits(call, first, rng), _PAIRED):
        yield from itertools.islice(_edits(edited, second, rng), _PAIRED)


def _equalled(call: Call) -> Iterator[Call]:
    """An argument set equal to another of its type (``start == end``): an empty overlap, a
    zero-width range; and a number list's first element set to each number argument (a value
    at ``high``)."""
    args, kwargs = call
    for index, value in enumerate(args):
        others = [other for i, other in enumerate(args) if i != index]
        for other in others:
            if type(other) is type(value) and other != value and type(value) not in (int, float):
                yield [*args[:index], other, *args[index + 1 :]], kwargs
        if isinstance(value, list) and value and all(type(x) in (int, float) for x in value):
            for other in others:
                if type(other) in (int, float):
                    edited = [type(value[0])(other), *value[1:]]
                    yield [*args[:index], edited, *args[index + 1 :]], kwargs


def _related(call: Call) -> Iterator[Call]:
    """Boundaries between arguments (off-by-one bugs live there): a number set to another
    number argument, or to another argument's length, and each of those plus or minus one."""
    args, _ = call
    for index, value in enumerate(args):
        if type(value) not in (int, float):
            continue
        for other_index, other in enumerate(args):
            if other_index == index:
                continue
            if type(other) in (int, float):
                anchor = other
            elif isinstance(other, str | bytes | list | tuple | dict | set):
                anchor = len(other)
            else:
                continue
            for shifted in (anchor, anchor + 1, anchor - 1):
                yield [*args[:index], type(value)(shifted), *args[index + 1 :]], call[1]


def _round_robin(groups: list[Iterator[Call]]) -> Iterator[Call]:
    """One item of each group in turn, until all are exhausted."""
    live = list(groups)
    while live:
        for group in list(live):
            item = next(group, None)
            if item is None:
                live.remove(group)
            else:
                yield item


def _function(tree: ast.Module, entry_point: str) -> _Function | None:
    """The candidate's function for the entry point: its own name, else its one plausible one."""
    functions = {n.name: n for n in tree.body if isinstance(n, _Function)}
    if entry_point in functions:
        return functions[entry_point]
    plausible = plausible_functions(ast.unparse(tree)) if functions else []
    return functions.get(plausible[0]) if plausible else None


def _hinted_calls(function: _Function | None, *, guess: bool = False) -> Iterator[Call]:
    """Calls built from the parameters' annotations: the first example of each required
    parameter, then one parameter at a time through its other examples (an optional one by
    keyword). Nothing when a required parameter has no usable annotation, unless ``guess``:
    then it takes `_GUESSES`."""
    if function is None:
        return
    signature = function.args
    positional = [*signature.posonlyargs, *signature.args]
    first_optional = len(positional) - len(signature.defaults)
    slots: list[_Slot] = []
    for index, parameter in enumerate(positional):
        values = hint_values(parameter.annotation)
        if index < first_optional and guess and not values:
            values = list(_GUESSES)
        if index < first_optional:
            slots.append(_Slot(None, values, required=True))
        elif values and parameter not in signature.posonlyargs:
            slots.append(_Slot(parameter.arg, values, required=False))
    for parameter, default in zip(signature.kwonlyargs, signature.kw_defaults, strict=True):
        values = hint_values(parameter.annotation)
        if default is None and guess and not values:
            values = list(_GUESSES)
        if default is None or values:
            slots.append(_Slot(parameter.arg, values, required=default is None))
    if any(slot.required and not slot.values for slot in slots):
        return
    yield _hinted(slots, None, None)
    yield from _round_robin([_varied(slots, index) for index in range(len(slots))])


@dataclass(frozen=True)
class _Slot:
    keyword: str | None  # None: passed by position
    values: list[Any]
    required: bool


def _varied(slots: list[_Slot], index: int) -> Iterator[Call]:
    """The calls varying slot ``index`` through its examples (a required one past its first)."""
    slot = slots[index]
    for value in slot.values[1:] if slot.required else slot.values:
        yield _hinted(slots, index, value)


def _hinted(slots: list[_Slot], varied: int | None, value: Any) -> Call:
    """The call giving each required slot its first example, and slot ``varied`` ``value``."""
    args: list[Any] = []
    kwargs: list[tuple[str, Any]] = []
    for index, slot in enumerate(slots):
        if index != varied and not slot.required:
            continue
        chosen = value if index == varied else slot.values[0]
        if slot.keyword is None:
            args.append(chosen)
        else:
            kwargs.append((slot.keyword, chosen))
    return args, kwargs
