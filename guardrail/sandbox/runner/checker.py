"""Doctest's output checker, mirrored: whether an example's output is the one its docstring expects.

`check_output` decides as ``doctest.OutputChecker.check_output`` does (the option flags
``DONT_ACCEPT_TRUE_FOR_1``, ``DONT_ACCEPT_BLANKLINE``, ``NORMALIZE_WHITESPACE``, ``ELLIPSIS``);
`exception_matches` compares an expected exception by its exception-only line, as doctest does
(``IGNORE_EXCEPTION_DETAIL``), with one allowance for the class of a candidate's own exception,
rebuilt in the judge. Used by the judge's example runner (`doctesting`) on text, and on exceptions
raised in the judge (a candidate's arrive rebuilt there from plain data: `exceptions`).

It mirrors rather than imports ``doctest``: that module pulls ``pdb``, ``inspect``, ``difflib``
and ``unittest`` in, 71 modules and about 90 ms in every judge that ran a doctest (far more under
gVisor), against about 4 ms for a whole job. A host test checks the mirror against the real one.
"""

from __future__ import annotations

import re

# The option flags that change how output is compared, by directive name, with doctest's values.
FLAGS = {
    "DONT_ACCEPT_TRUE_FOR_1": 1,
    "DONT_ACCEPT_BLANKLINE": 2,
    "NORMALIZE_WHITESPACE": 4,
    "ELLIPSIS": 8,
    "IGNORE_EXCEPTION_DETAIL": 32,
}
_BLANKLINE = re.compile(r"(?m)^<BLANKLINE>\s*?$")
_SPACES_ONLY = re.compile(r"(?m)^[^\S\n]+$")


def check_output(want: str, got: str, flags: int) -> bool:
    """Whether ``got`` matches ``want`` as ``doctest.OutputChecker.check_output`` decides."""
    got, want = _ascii(got), _ascii(want)
    if got == want:
        return True
    if not flags & FLAGS["DONT_ACCEPT_TRUE_FOR_1"] and (got, want) in (
        ("True\n", "1\n"),
        ("False\n", "0\n"),
    ):
        return True
    if not flags & FLAGS["DONT_ACCEPT_BLANKLINE"]:
        want = _BLANKLINE.sub("", want)
        got = _SPACES_ONLY.sub("", got)
        if got == want:
            return True
    if flags & FLAGS["NORMALIZE_WHITESPACE"]:
        got, want = " ".join(got.split()), " ".join(want.split())
        if got == want:
            return True
    return bool(flags & FLAGS["ELLIPSIS"]) and _ellipsis_match(want, got)


def exception_line(exc: BaseException) -> str:
    """The last line ``traceback.format_exception_only`` gives, which doctest compares."""
    notes = getattr(exc, "__notes__", None)
    if isinstance(notes, list | tuple) and notes:
        return str(notes[-1]).split("\n")[-1] + "\n"
    kind = type(exc)
    name = kind.__qualname__
    if kind.__module__ not in ("__main__", "builtins"):
        name = f"{kind.__module__}.{name}"
    if isinstance(exc, SyntaxError):
        return f"{name}: {exc.msg or '<no detail available>'}\n"
    try:
        text = str(exc)
    except Exception:
        text = "<exception str() failed>"
    return f"{name}: {text}\n" if text else f"{name}\n"


def exception_matches(raises: str, exc: BaseException, flags: int) -> bool:
    """Doctest's comparison of the exception-only line, then one allowance: an exception whose
    class is not a builtin is compared without its module path. Rebuilt in the judge, the class
    of a candidate's own exception has the judge's module, not the candidate's."""
    got = exception_line(exc)
    if check_output(raises, got, flags):
        return True
    ignore_detail = flags & FLAGS["IGNORE_EXCEPTION_DETAIL"]
    if ignore_detail and check_output(_exception_name(raises), _exception_name(got), flags):
        return True
    kind = type(exc)
    if kind.__module__ in ("__main__", "builtins") or not got.startswith(kind.__module__ + "."):
        return False
    bare, name = got[len(kind.__module__) + 1 :], kind.__qualname__
    first, newline, later = raises.partition("\n")
    head, colon, detail = first.partition(":")
    if head.endswith("." + name):
        raises = name + colon + detail + newline + later
    return check_output(raises, bare, flags)


def _exception_name(message: str) -> str:
    """``doctest._strip_exception_details``: ``pkg.mod.Error: detail`` -> ``Error``."""
    end = message.find("\n")
    end = len(message) if end < 0 else end
    colon = message.find(":", 0, end)
    end = colon if colon >= 0 else end
    return message[message.rfind(".", 0, end) + 1 : end]


def _ellipsis_match(want: str, got: str) -> bool:
    """``doctest._ellipsis_match``: each ``...`` in ``want`` matches any text of ``got``."""
    pieces = want.split("...")
    if len(pieces) == 1:
        return want == got
    start, end = 0, len(got)
    if pieces[0]:
        if not got.startswith(pieces[0]):
            return False
        start = len(pieces[0])
        del pieces[0]
    if pieces[-1]:
        if not got.endswith(pieces[-1]):
            return False
        end -= len(pieces[-1])
        del pieces[-1]
    if start > end:
        return False  # the two ends overlap ('aa...aa' against 'aaa')
    for piece in pieces:
        start = got.find(piece, start, end)
        if start < 0:
            return False
        start += len(piece)
    return True


def _ascii(text: str) -> str:
    return text.encode("ASCII", "backslashreplace").decode("ASCII")
