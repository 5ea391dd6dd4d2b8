"""One doctest example, run in the judge as the standard library's doctest runner runs it.

`doctest_example` is put into the judge's test namespace as ``__doctest_example__``; a docstring's
examples become one call each, in order (`guardrail.index.doctests`), and share the namespace as a
doctest session shares its globals. Each call compiles the example in ``"single"`` mode (a bare
expression shows its repr through the display hook and is ``_`` afterwards, ``>>> x, y`` a tuple),
runs it in the calling test's globals, captures what it printed (``sys.stdout`` is swapped, so a
candidate's printed output that the judge writes there on return is captured too) and compares that
text with the expected output as doctest does (`checker`, doctest's output checker mirrored).
An object of the candidate's that is not plain data shows its own text there, as in doctest
(`showing`). A class an example defines that reads only the module's names (a decorator of the
module, a base class of it) is defined in the candidate's process, as doctest defines it against
the module; the tests hold it as a candidate class.

A mismatch raises `AssertionError` (the test's ``FAIL``) with a short, capped description. An
exception the example raised and did not expect propagates unchanged (the judge's ``ERROR:<name>``,
as doctest fails it), and only `Exception`s and the candidate's own others (its ``SystemExit``)
are ever compared: the judge's faults (a value that cannot be judged, a timeout) are not, so they
keep their own verdict and never become a FAIL.
"""

from __future__ import annotations

import ast
import io
import sys
from typing import Any

from .checker import FLAGS, check_output, exception_line, exception_matches
from .example_classes import candidate_class
from .exceptions import CandidateRaisedBase
from .showing import displaying

__all__ = [
    "FLAGS",
    "Unjudged",
    "check_output",
    "doctest_example",
    "example_sources",
    "exception_line",
    "names_of",
]

_SHOWN = 200  # characters of expected and actual output a failure message quotes


class Unjudged(BaseException):
    """The example reads a name that an earlier example of the session could not be judged on
    (its call hit a fault: the value stayed unknown, an argument may not have been written
    back). The judge reports it as a value it could not judge, never as the code's failure."""


class _Mismatch(AssertionError):
    """The example ran and showed, printed or raised something other than what was expected."""


class _Session:
    """What a docstring's examples have bound so far, and what a fault left unknown."""

    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.unknown: set[str] = set()
        self.in_candidate: set[str] = set()  # classes defined in the candidate's process


# The judge's hook in the tests' namespace: define a class in the candidate's process.
DEFINE_CLASS = "__define_class__"


_SESSION = "__doctest_session__"


def doctest_example(
    source: str,
    want: str = "",
    *,
    options: str = "",
    raises: str | None = None,
    unchecked: str = "",
) -> None:
    """Run ``source`` in the caller's globals and check its output as doctest would.

    ``want`` is the expected output, ``raises`` the expected exception-only line (``ValueError:
    negative``), ``options`` the example's directives (``"+ELLIPSIS +NORMALIZE_WHITESPACE"``).
    ``unchecked`` names why the output cannot be compared (a memory address in it): the example
    still runs, so the names it binds exist for the next ones, but nothing it shows is computed
    (no repr is taken), and only raising fails it.

    Raises `Unjudged` for an example that reads a name an earlier one was cut off from by a
    fault: ``it = f()`` that could not be judged leaves ``next(it)`` nothing to judge.
    """
    namespace: dict[str, Any] = sys._getframe(1).f_globals
    session = namespace.setdefault(_SESSION, _Session())
    reads, binds = names_of(source)
    if reads & session.unknown:
        session.unknown |= binds
        names = ", ".join(sorted(reads & session.unknown))
        raise Unjudged(f"not judged: it reads {names}, left unknown by an earlier fault")
    define = namespace.get(DEFINE_CLASS)
    defined = None if want or raises is not None else candidate_class(source, session)
    if define is not None and defined is not None:
        try:
            namespace[defined] = define(source, defined)
        except BaseException:
            session.unknown |= binds
            raise
        session.bound.add(defined)
        session.unknown.discard(defined)
        session.in_candidate.add(defined)
        return
    try:
        with displaying():  # what it shows is compared as text, as doctest compares it
            _run(namespace, source, want, options=options, raises=raises, unchecked=unchecked)
    except _Mismatch:  # it ran to the end; what it showed was wrong
        session.bound |= binds
        session.unknown -= binds
        raise
    except BaseException:
        # It stopped part way, by a fault or an exception (which may carry a fault the judge
        # met serving a callback): what it bound or passed is unknown from here on. Its own
        # outcome still says what happened; an ERROR keeps the verdict failed.
        session.unknown |= binds | (reads & session.bound)
        raise
    session.bound |= binds
    session.unknown -= binds


def _run(
    namespace: dict[str, Any],
    source: str,
    want: str,
    *,
    options: str,
    raises: str | None,
    unchecked: str,
) -> None:
    flags = _flags(options)
    want, raises = _terminated(want), None if raises is None else _terminated(raises)
    printed = io.StringIO()
    saved = sys.stdout, sys.displayhook
    sys.stdout = printed
    sys.displayhook = _discard if unchecked else _display_hook(namespace)
    try:
        try:
            exec(compile(_terminated(source), "<doctest>", "single", 0, True), namespace)
        finally:
            sys.stdout, sys.displayhook = saved
    except (Exception, CandidateRaisedBase) as exc:  # never the judge's faults (BaseException)
        # A candidate's SystemExit (argparse's, on bad arguments) is compared as doctest
        # compares it; it arrives as a stand-in outside `Exception`.
        if raises is None:
            raise
        if exception_matches(raises, exc, flags):
            return
        raise _Mismatch(f"expected {_cap(raises)!r}, raised {_cap(exception_line(exc))!r}") from exc
    got = printed.getvalue()
    if raises is not None:
        raise _Mismatch(f"expected {_cap(raises)!r}, nothing was raised; got {_cap(got)!r}")
    if not unchecked and not check_output(want, got, flags):
        raise _Mismatch(f"expected {_cap(want)!r}, got {_cap(got)!r}")


def names_of(source: str) -> tuple[set[str], set[str]]:
    """The names an example reads, and those it binds (empty for one that does not parse)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set(), set()  # compiled below, it raises as doctest would have it
    reads: set[str] = set()
    binds: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name):
            (reads if isinstance(node.ctx, ast.Load) else binds).add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            binds.add(node.name)
        elif isinstance(node, ast.alias):
            binds.add((node.asname or node.name).split(".")[0])
    return reads, binds


def example_sources(tree: ast.AST) -> list[str]:
    """The example sources a test's ``__doctest_example__`` calls carry, for the judge's reading
    of which names the tests bind (they are string literals, invisible to a walk of the test)."""
    return [
        node.args[0].value
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "__doctest_example__"
        and node.args
        and isinstance(node.args[0], ast.Constant)
        and isinstance(node.args[0].value, str)
    ]


def _flags(options: str) -> int:
    flags = 0
    for option in options.split():
        sign, name = option[:1], option[1:]
        if sign not in "+-" or name not in FLAGS:
            raise ValueError(f"unknown doctest option {option!r}; known: {sorted(FLAGS)}")
        flags = flags | FLAGS[name] if sign == "+" else flags & ~FLAGS[name]
    return flags


def _terminated(text: str) -> str:
    """Doctest's sources and outputs end in a newline; the test text leaves it out."""
    return text if not text or text.endswith("\n") else text + "\n"


def _display_hook(namespace: dict[str, Any]) -> Any:
    """``sys.displayhook`` as doctest's session has it: shows the repr and keeps the value as
    the builtin ``_`` (``>>> _``), in the builtins the examples see (the judge's are a dict)."""
    names = namespace.get("__builtins__")

    def keep(value: object) -> None:
        if isinstance(names, dict):
            names["_"] = value
        elif names is not None:
            names._ = value

    def display(value: object) -> None:
        if value is None:
            return
        keep(None)  # as the real hook: ``_`` is unset while the repr is taken
        sys.stdout.write(repr(value) + "\n")
        keep(value)

    return display


def _discard(value: object) -> None:
    """A display hook that shows nothing and takes no repr (of a value it could not judge)."""


def _cap(text: str) -> str:
    return text if len(text) <= _SHOWN else text[:_SHOWN] + "..."
