"""Which code objects the retrieved definition compiles to, named by a fingerprint; the
judge's own view of them, and whether the candidate's report (`retrieved.watch`) shows them.

Both sides compile the substituted module as the candidate's import runs it (`compiled`;
compile only in the judge, where nothing of it ever runs) and find the code objects of the
definition at the judged name and lines (`definitions`).
"""

from __future__ import annotations
import __future__

import contextlib
import hashlib
import re
from types import CodeType
from typing import Any, NamedTuple

__all__ = ["FUNCTION", "Expected", "compiled", "definitions", "expected", "fingerprint"]
__all__ += ["not_retrieved"]

FUNCTION = 0x1  # CO_OPTIMIZED: a function's code, never a class body's (inspect would load more)


def compiled(entry: dict[str, Any]) -> CodeType:
    """The module code of a shipped module entry, compiled as the candidate's import runs it
    (as Python imports it: with its own ``__future__`` imports only, never this module's)."""
    return compile(str(entry["source"]), str(entry["file"]), "exec", dont_inherit=True)


def definitions(code: CodeType, judged: dict[str, Any]) -> list[CodeType]:
    """The code objects in ``code`` (at any depth) of the definition at ``judged["name"]``
    (qualified) whose first line is in one of ``judged["lines"]`` (the substituted text)."""
    name = str(judged.get("name", ""))
    ranges = [(int(a), int(b)) for a, b in judged.get("lines") or []]
    last = name.rpartition(".")[2]
    found: list[CodeType] = []
    stack = [code]
    while stack:
        current = stack.pop()
        for const in current.co_consts:
            if isinstance(const, CodeType):
                stack.append(const)
                qualified = getattr(const, "co_qualname", None)  # 3.11+; 3.10 has co_name only
                if (qualified == name if qualified is not None else const.co_name == last) and any(
                    a <= const.co_firstlineno <= b for a, b in ranges
                ):
                    found.append(const)
    return found


def fingerprint(code: CodeType) -> str:
    """sha256 of what a code object is made of (the same text and place, the same print)."""
    return hashlib.sha256(repr(_described(code)).encode("utf-8", "surrogatepass")).hexdigest()


def _described(code: CodeType) -> tuple[Any, ...]:
    return (
        code.co_filename,
        code.co_name,
        code.co_firstlineno,
        code.co_argcount,
        code.co_posonlyargcount,
        code.co_kwonlyargcount,
        code.co_flags,
        code.co_code,
        code.co_names,
        code.co_varnames,
        code.co_freevars,
        code.co_cellvars,
        tuple(_constant(c) for c in code.co_consts),
    )


def _constant(value: object) -> Any:
    if isinstance(value, CodeType):
        return _described(value)
    if isinstance(value, tuple):
        return ("tuple", tuple(_constant(v) for v in value))
    if isinstance(value, frozenset):  # its order follows hashes: the same set, any order
        return ("frozenset", tuple(sorted(repr(_constant(v)) for v in value)))
    return (type(value).__name__, repr(value))


class Expected(NamedTuple):
    """What the judge's own compile says the candidate must show: the fingerprints of the
    definition's code objects, and whether running the tests must run one of them (a class
    without methods of its own runs no code of its text after its definition)."""

    prints: list[str]
    runs: bool


def expected(context: Any, claimed: Any = None) -> Expected | None:
    """The judge's own view of the definition a job's context judges (None when it judges
    none: no qualified name, or text that does not define it); no prints when it does not
    compile here.

    First only the definition's own lines are compiled, where the module has them (line
    numbers, the classes above it, the module's ``__future__`` flags and imported names, which
    change how a method call on them compiles): the whole module's compile gives the same code
    objects at many times the cost (a 3,500-line module takes some 80 ms). Unless that agrees
    with the fingerprints the candidate ``claimed``, the whole module is compiled: the claim
    only spares work, it never decides."""
    judged = context.get("judged") if isinstance(context, dict) else None
    if not isinstance(judged, dict):
        return None
    try:
        entry = context["modules"][str(context["module"])]
        source, file = str(entry["source"]), str(entry["file"])
        found: list[CodeType] = []
        with contextlib.suppress(SyntaxError, ValueError):
            found = _in_place_definitions(source, file, judged)
        if sorted({fingerprint(c) for c in found}) != claimed:
            found = definitions(compiled(entry), judged)
    except (SyntaxError, ValueError, MemoryError, RecursionError, KeyError, TypeError):
        return Expected([], runs=True)
    runs = any(
        c.co_flags & FUNCTION or any(isinstance(i, CodeType) for i in c.co_consts) for c in found
    )
    return Expected(sorted({fingerprint(c) for c in found}), runs)


def _in_place_definitions(source: str, file: str, judged: dict[str, Any]) -> list[CodeType]:
    lines = _LINE_BREAK.split(source)
    classes = str(judged.get("name", "")).split(".")[:-1]
    imported = _imported(source)
    found: list[CodeType] = []
    for first, last in judged.get("lines") or []:
        text = _in_place(lines, int(first), int(last), classes, imported)
        code = compile(text, file, "exec", _future_flags(source), dont_inherit=True)
        found += definitions(code, judged)
    return found


_LINE_BREAK = re.compile(r"\r\n|\r|\n")  # as Python numbers lines (`guardrail.substitution`)
_IMPORT = re.compile(r"^(?:from[ \t]+[\w.]+[ \t]+)?import[ \t]+(\([^)]*\)|[^#;\n]*)", re.MULTILINE)
_FUTURE = re.compile(r"^from\s+__future__\s+import\s+\(?([\w\s,]+)\)?", re.MULTILINE)


def _in_place(
    lines: list[str], first: int, last: int, classes: list[str], imported: list[str]
) -> str:
    """Lines ``first..last`` of a module at their own line numbers, after one line importing
    the names the module may import and under a stand-in for each class above them (named as
    the module's: a method's qualified name and private names come from them) or, at the top
    level, an ``if`` block for an indented definition."""
    body = lines[first - 1 : last]
    heads = [f"{' ' * depth}class {name}:" for depth, name in enumerate(classes)]
    if not heads and body and body[0][:1] in (" ", "\t"):
        heads = ["if 1:"]
    if imported:
        heads.insert(0, f"import {', '.join(imported)}")
    if len(heads) >= first:
        raise ValueError("no room above the definition")
    return "\n" * (first - 1 - len(heads)) + "\n".join([*heads, *body]) + "\n"


def _imported(source: str) -> list[str]:
    """The names the module's top-level import statements bind (``import a.b`` binds a;
    ``as`` names; ``from x import (a, b)`` over lines). One missed (inside an ``if``, on a
    backslashed line) or one too many (a docstring's line) only costs the whole module's
    compile."""
    names: set[str] = set()
    for match in _IMPORT.finditer(source):
        for part in match.group(1).strip("()").split(","):
            words = part.split()
            if not words or words[0] == "*":
                continue
            name = words[2] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0]
            if name.isidentifier():
                names.add(name)
    return sorted(names)


def _future_flags(source: str) -> int:
    """The compiler flags of the module's ``from __future__`` imports."""
    flags = 0
    for match in _FUTURE.finditer(source):
        for name in match.group(1).replace("\n", " ").split(","):
            feature = getattr(__future__, name.strip().split(" ")[0], None)
            flags |= getattr(feature, "compiler_flag", 0)
    return flags


def not_retrieved(report: Any, judge: Expected, when: str, *, ended: bool = False) -> str | None:
    """Why the candidate's ``report`` (`watch`) does not show the retrieved definition bound
    under the judged name, in the judge's own terms (None: it does). ``ended``: after the
    last test, when the tests must also have run the definition's code."""
    if not judge.prints:
        return "the judge found no retrieved definition in its own compile of the module"
    if not isinstance(report, dict):
        return f"the candidate did not say {when} which code the tests call"
    if isinstance(report.get("broken"), str):
        return str(report["broken"])[:500]
    if report.get("found") != judge.prints:
        return f"the code the candidate compiled {when} is not the retrieved text"
    mode = report.get("mode")
    if mode not in ("identity", "class", "ran"):
        return f"the candidate said something unknown {when} about the code the tests call"
    if mode == "identity" and report.get("bound") not in judge.prints:
        return f"the code bound under the tested name {when} is not the retrieved text"
    if ended and judge.runs and report.get("ran") is not True:
        return "the tests ran without running the retrieved definition's code"
    return None
