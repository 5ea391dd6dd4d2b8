"""Which files under an indexed root `split_tree` leaves out: ``--exclude`` globs and test files.

Globs are matched against paths relative to the indexed root, written with ``/``, with
gitignore-like rules:

* ``*`` matches within one path component, ``?`` one character, ``[abc]`` one of a set;
* ``**`` matches any number of whole components: ``**/fixtures/**``, ``docs/**``;
* a glob without a ``/`` matches a name at any depth (``*_pb2.py``, ``fixtures``);
  one with a ``/`` is anchored at the root (``src/legacy/*.py``); a leading ``/`` is dropped;
* a glob that matches a directory leaves out everything under it (``build``, ``vendor/``);
  a trailing ``/`` matches directories only.

By default, tests are left out too (`TEST_GLOBS`): they are not code an agent should reuse,
and their helpers would crowd real functions out of the results. Folders named ``testing`` are
kept: in many libraries (``numpy.testing``) they are public helper code.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import PurePosixPath

from guardrail.errors import InputError

__all__ = ["TEST_GLOBS", "PathFilter"]

TEST_GLOBS = ("tests/", "test/", "test_*.py", "*_test.py", "conftest.py")
"""What ``split_tree`` leaves out unless ``include_tests``: test folders and pytest's file names."""

_HINT = "globs are relative to the indexed root: --exclude '**/fixtures/**' --exclude '*_pb2.py'"


class PathFilter:
    """Decides whether a path relative to the indexed root is excluded.

    Args:
        globs: the user's exclude globs (see the module docstring for their rules).
        include_tests: keep test files and folders (`TEST_GLOBS`), which are excluded by default.

    Raises:
        InputError: a glob that is empty or has an unclosed ``[``.
    """

    def __init__(self, globs: Iterable[str] = (), *, include_tests: bool = False) -> None:
        self.globs = tuple(globs)
        chosen = self.globs if include_tests else (*self.globs, *TEST_GLOBS)
        self._rules = [_compile(glob) for glob in chosen]

    def excludes(self, relative: str, *, is_dir: bool) -> bool:
        """Whether ``relative`` (``a/b.py``, relative to the root) is left out.

        Callers walk top-down and do not enter excluded directories, so only the path itself is
        matched here, not its parents.
        """
        return any(
            pattern.fullmatch(relative) and (is_dir or not dirs_only)
            for pattern, dirs_only in self._rules
        )


def _compile(glob: str) -> tuple[re.Pattern[str], bool]:
    dirs_only = glob.endswith("/")
    body = glob.strip("/")
    if not body:
        raise InputError(f"empty --exclude glob {glob!r}", hint=_HINT)
    if "/" not in body:
        body = f"**/{body}"
    components = PurePosixPath(body).parts
    parts: list[str] = []
    for index, component in enumerate(components):
        last = index == len(components) - 1
        if component == "**":
            parts.append(".*" if last else "(?:.*/)?")
        else:
            parts.append(_component(component, glob) + ("" if last else "/"))
    return re.compile("".join(parts), re.DOTALL), dirs_only


def _component(component: str, glob: str) -> str:
    """One path component of a glob as a regular expression (never crosses a ``/``)."""
    out: list[str] = []
    i = 0
    while i < len(component):
        char = component[i]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = component.find("]", i + 2 if component[i + 1 : i + 2] in {"!", "]"} else i + 1)
            if end < 0:
                raise InputError(f"unclosed '[' in --exclude glob {glob!r}", hint=_HINT)
            members = component[i + 1 : end].replace("\\", "\\\\")
            if members.startswith("!"):
                members = "^" + members[1:]
            out.append(f"[{members}]")
            i = end
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)
