"""Reading candidate code from files: plain ``.py`` files or JSON Lines of snippets.

Everything is read and validated before anything runs; a bad file or line is a
`CandidateFileError` naming the file and line.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from guardrail.errors import CandidateFileError
from guardrail.textfiles import read_text

__all__ = ["SourcedCode", "read_candidates"]


class SourcedCode(BaseModel):
    """A candidate's code and where it came from (``file`` or ``file:line`` or a given id)."""

    model_config = ConfigDict(frozen=True)

    source: str
    code: str


class _SnippetLine(BaseModel):
    model_config = ConfigDict(extra="allow")

    code: str
    id: str | None = None


def read_candidates(paths: Iterable[Path]) -> list[SourcedCode]:
    """Every candidate in ``paths``: a ``.jsonl`` file holds one ``{"code": ...}`` per line."""
    found: list[SourcedCode] = []
    for path in paths:
        text = read_text(path, CandidateFileError)
        if path.suffix == ".jsonl":
            found.extend(_jsonl_candidates(path, text))
        else:
            found.append(SourcedCode(source=str(path), code=text))
    if not found:
        raise CandidateFileError("no candidates given", hint="pass code files or a .jsonl file")
    return found


def _jsonl_candidates(path: Path, text: str) -> list[SourcedCode]:
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            row = _SnippetLine.model_validate(json.loads(line))
        except json.JSONDecodeError as exc:
            raise CandidateFileError(f"{path}:{number}: not valid JSON: {exc.msg}") from None
        except ValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(str(part) for part in problem["loc"]) or "line"
            raise CandidateFileError(
                f"{path}:{number}: {field}: {problem['msg']}",
                hint='each line must be an object like {"code": "def f(): ...", "id": "optional"}',
            ) from None
        found.append(SourcedCode(source=row.id or f"{path}:{number}", code=row.code))
    return found
