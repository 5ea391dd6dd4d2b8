"""Inputs to ask candidates about: `Probe` and `generate_probes`. Pure host code: nothing runs.

When several candidates pass the tests given, the gate runs them on more inputs and asks about
one on which they disagree (`guardrail.questions`). The inputs come, in this order, from:

1. ``test``: calls of the spec's entry point in its tests (and in the doctest examples the
   tests carry) whose arguments are all literals (``ast.literal_eval``);
2. ``doctest``: such calls in the ``>>>`` examples of the candidates' docstrings (a literal
   call needs no earlier example; a candidate bound under another name calls that name);
3. ``mutation``: each argument of those calls edited once (`guardrail.probe_values.mutations`),
   taken round-robin over the calls and their arguments so every one gets edited within the cap;
4. ``type-hint``: only when 1-2 found no argument to edit, example values of the candidates'
   parameter annotations (``int``, ``str``, ``list[int]``, ``dict[str, int] | None``...), one
   parameter varied at a time.

Deterministic for a given seed (it only varies a few "larger" numbers), deduplicated, capped.
A probe's arguments are literal source texts, checked when a `Probe` is built (also from JSON),
so a probe's call is data to paste, never code that could do something else.
"""

from __future__ import annotations

import ast
import doctest
import itertools
import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, field_validator

from guardrail.precheck import MAX_PARSE_BYTES, capped_size
from guardrail.probe_values import hint_values, literal_text, mutations
from guardrail.sandbox.runner.doctesting import example_sources
from guardrail.sandbox.runner.observing import OBSERVER
from guardrail.sandbox.runner.static import plausible_functions
from guardrail.spec import Spec

__all__ = ["Probe", "generate_probes"]

Origin = Literal["test", "doctest", "mutation", "type-hint"]
_Function = ast.FunctionDef | ast.AsyncFunctionDef
_MUTATIONS_PER_ARGUMENT = 12


class Probe(BaseModel):
    """One input to call the entry point with: literal source texts, ready to paste."""

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
        """The probe test the judge runs: it records what the call gave (`runner.observing`)."""
        return f"{OBSERVER}(lambda: {self.call})"


def _check_literal(text: str) -> None:
    try:
        ast.literal_eval(text)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        raise ValueError(f"probe argument {text[:100]!r} is not a Python literal") from None


Call = tuple[list[Any], list[tuple[str, Any]]]  # positional values, (keyword, value) pairs


def generate_probes(
    spec: Spec, codes: Sequence[str], *, limit: int = 40, seed: int = 0
) -> list[Probe]:
    """Up to ``limit`` distinct probes of ``spec.entry_point`` (see the module docstring)."""
    if limit <= 0:
        return []
    rng = random.Random(seed)  # noqa: S311 - varied inputs, not secrets
    trees = [tree for tree in map(_parsed, codes) if tree is not None]
    probes: dict[tuple[Any, ...], Probe] = {}

    def add(call: Call, origin: Origin) -> None:
        probe = _probe(spec.entry_point, call, origin)
        if probe is not None and len(probes) < limit:
            probes.setdefault((probe.args, probe.kwargs), probe)

    seeds = [(call, "test") for call in _test_calls(spec)]
    seeds += [(call, "doctest") for tree in trees for call in _doctest_calls(tree, spec)]
    for call, origin in seeds:
        add(call, origin)  # type: ignore[arg-type]  # the two literals above
    groups = [_edits(call, index, rng) for call, _ in seeds for index in _positions(call)]
    for edited in _round_robin(groups):
        if len(probes) >= limit:
            break
        add(edited, "mutation")
    if not groups:  # no literal argument to edit: the annotations say what to try
        for tree in trees:
            for call in _hinted_calls(_function(tree, spec.entry_point)):
                add(call, "type-hint")
    return list(probes.values())


def _parsed(code: str) -> ast.Module | None:
    if capped_size(code, MAX_PARSE_BYTES) > MAX_PARSE_BYTES:
        return None
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        return None


def _probe(entry_point: str, call: Call, origin: Origin) -> Probe | None:
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


def _literal_calls(tree: ast.AST, names: set[str]) -> Iterator[Call]:
    """Calls of one of ``names`` whose arguments are all literals, in source order."""
    nodes = sorted(
        ast.walk(tree), key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0))
    )
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)):
            continue
        if node.func.id not in names:
            continue
        try:
            args = [ast.literal_eval(arg) for arg in node.args]
            kwargs = [(str(k.arg), ast.literal_eval(k.value)) for k in node.keywords if k.arg]
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            continue  # not a literal (a name, a lambda, a starred argument)
        if len(kwargs) == len(node.keywords):  # a ``**kwargs`` spread is not a literal call
            yield args, kwargs


def _position(node: ast.AST) -> tuple[int, int]:
    return getattr(node, "lineno", 0), getattr(node, "col_offset", 0)


def _test_calls(spec: Spec) -> list[Call]:
    found: list[Call] = []
    for test in spec.tests:
        tree = ast.parse(test)  # the spec parsed it when it was built
        found += _literal_calls(tree, {spec.entry_point})
        for source in example_sources(tree):
            example = _parsed(source)
            if example is not None:
                found += _literal_calls(example, {spec.entry_point})
    return found


def _doctest_calls(tree: ast.Module, spec: Spec) -> list[Call]:
    """Literal calls in the candidate's docstrings of the entry point, or of its one plausible
    function when it defines the entry point under another name (the gate's alias)."""
    names = {spec.entry_point}
    defined = {n.name for n in tree.body if isinstance(n, _Function | ast.ClassDef)}
    if spec.entry_point not in defined:
        names |= set(plausible_functions(ast.unparse(tree))[:1])
    found: list[Call] = []
    parser = doctest.DocTestParser()
    for node in ast.walk(tree):
        if not isinstance(node, _Function | ast.ClassDef | ast.Module):
            continue
        docstring = ast.get_docstring(node, clean=True)
        if not docstring or ">>>" not in docstring:
            continue
        try:
            examples = parser.get_examples(docstring)
        except ValueError:  # a malformed example block
            continue
        for example in examples:
            source = _parsed(example.source)
            if source is not None:
                found += _literal_calls(source, names)
    return found


def _positions(call: Call) -> list[int | str]:
    args, kwargs = call
    return [*range(len(args)), *(name for name, _ in kwargs)]


def _edits(call: Call, position: int | str, rng: random.Random) -> Iterator[Call]:
    """``call`` with the argument at ``position`` replaced by each of its mutations."""
    args, kwargs = call
    current = args[position] if isinstance(position, int) else dict(kwargs)[position]
    for value in itertools.islice(mutations(current, rng), _MUTATIONS_PER_ARGUMENT):
        if isinstance(position, int):
            yield [*args[:position], value, *args[position + 1 :]], kwargs
        else:
            yield args, [(n, value if n == position else v) for n, v in kwargs]


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


def _hinted_calls(function: _Function | None) -> Iterator[Call]:
    """Calls built from the parameters' annotations: the first example of each required
    parameter, then one parameter at a time through its other examples (an optional one by
    keyword). Nothing when a required parameter has no usable annotation."""
    if function is None:
        return
    signature = function.args
    positional = [*signature.posonlyargs, *signature.args]
    first_optional = len(positional) - len(signature.defaults)
    slots: list[_Slot] = []
    for index, parameter in enumerate(positional):
        values = hint_values(parameter.annotation)
        if index < first_optional:
            slots.append(_Slot(None, values, required=True))
        elif values and parameter not in signature.posonlyargs:
            slots.append(_Slot(parameter.arg, values, required=False))
    for parameter, default in zip(signature.kwonlyargs, signature.kw_defaults, strict=True):
        values = hint_values(parameter.annotation)
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
