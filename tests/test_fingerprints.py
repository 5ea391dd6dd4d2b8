"""The judge's own view of the retrieved definition (`guardrail.sandbox.runner.fingerprints`).

It compiles only the definition's lines in place, and the whole module whenever that disagrees
with what the candidate claims: so its fingerprints are the whole module's compile whatever the
candidate says, and the cheap path is the one taken on real code.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest

from guardrail.index import split_python_file
from guardrail.sandbox.runner import fingerprints
from guardrail.substitution import substitute

SNIPPETS = Path(__file__).parent / "snippets"
FILES = [
    *sorted((SNIPPETS / "context").rglob("*.py")),
    *sorted((SNIPPETS / "honest_modules").rglob("*.py")),
    *(Path(click.__file__).parent / name for name in ("utils.py", "_compat.py", "termui.py")),
]


@functools.cache
def _contexts(file: Path) -> list[dict[str, Any]]:
    """A job context's target module (the definition substituted by itself, as the index
    stores it) for every definition of ``file`` the index would store."""
    source = file.read_text()
    contexts = []
    for snippet in split_python_file(file):
        placed = substitute(source, snippet.code, snippet.qualified_name)
        if snippet.qualified_name and placed.lines:
            entry = {"file": file.name, "package": False, "source": placed.source}
            judged = {"name": snippet.qualified_name, "lines": [list(r) for r in placed.lines]}
            contexts.append({"module": "m", "modules": {"m": entry}, "judged": judged})
    return contexts


def _whole(context: dict[str, Any]) -> list[str]:
    code = fingerprints.compiled(context["modules"]["m"])
    judged = context["judged"]
    return sorted({fingerprints.fingerprint(c) for c in fingerprints.definitions(code, judged)})


@pytest.mark.parametrize("file", FILES, ids=lambda f: f"{f.parent.name}/{f.name}")
def test_the_judges_view_is_the_whole_modules_compile_whatever_the_claim(file: Path) -> None:
    for context in _contexts(file):
        whole = _whole(context)
        assert whole, context["judged"]
        for claim in (None, ["0" * 64], whole):
            view = fingerprints.expected(context, claim)
            assert view is not None
            assert view.prints == whole


def test_the_definitions_own_lines_compile_as_in_the_module_on_real_code() -> None:
    agree = total = 0
    for file in FILES:
        for context in _contexts(file):
            entry = context["modules"]["m"]
            fast = fingerprints._in_place_definitions(
                entry["source"], entry["file"], context["judged"]
            )
            total += 1
            agree += sorted({fingerprints.fingerprint(c) for c in fast}) == _whole(context)
    assert total > 50
    assert agree / total > 0.95, (agree, total)


def test_what_contextmanager_makes_of_the_definition_holds_its_frame() -> None:
    """Calling a ``@contextlib.contextmanager`` function runs none of its code yet, as calling a
    generator function does: the frame it made is the definition's, so the call counts."""
    import contextlib

    from guardrail.sandbox.runner.retrieved import _made_frame

    def opened() -> Iterator[int]:
        yield 1

    manager = contextlib.contextmanager(opened)()
    assert _made_frame(manager).f_code is opened.__code__
    assert _made_frame(opened()).f_code is opened.__code__
    assert _made_frame(object()) is None
