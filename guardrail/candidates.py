"""Reading candidate code from files: plain ``.py`` files or JSON Lines of snippets.

Everything is read and validated before anything runs; a bad file or line is a
`CandidateFileError` naming the file and line. A code file or a snippet over the sandbox's limit
(`MAX_CODE_BYTES`) is such an error too, found before the file or line is read whole.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from guardrail.errors import CandidateFileError
from guardrail.precheck import MAX_CODE_BYTES, size_problem
from guardrail.textfiles import read_jsonl, read_text

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
        if path.suffix == ".jsonl":
            found.extend(_jsonl_candidates(path))
        else:
            text = read_text(path, CandidateFileError, max_bytes=MAX_CODE_BYTES)
            found.append(SourcedCode(source=str(path), code=text))
    if not found:
        raise CandidateFileError("no candidates given", hint="pass code files or a .jsonl file")
    return found


_JSONL_HINT = 'each line must be an object like {"code": "def f(): ...", "id": "optional"}'


def _jsonl_candidates(path: Path) -> list[SourcedCode]:
    def error(line: int | None, problem: str) -> CandidateFileError:
        where = f"{path}:{line}" if line is not None else str(path)
        return CandidateFileError(f"{where}: {problem}", hint=_JSONL_HINT)

    found = []
    for number, row in read_jsonl(path, error):
        try:
            snippet = _SnippetLine.model_validate(row)
        except ValidationError as exc:
            problem = exc.errors()[0]
            field = ".".join(str(part) for part in problem["loc"]) or "line"
            raise error(number, f"{field}: {problem['msg']}") from None
        too_large = size_problem(snippet.code)
        if too_large is not None:
            raise error(number, f"code: {too_large}")
        found.append(SourcedCode(source=snippet.id or f"{path}:{number}", code=snippet.code))
    if not found:
        raise error(None, "no candidates: the file has no JSON lines")
    return found
