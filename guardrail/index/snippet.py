"""`Snippet`: one function-sized piece of code, as stored in the code index.

A snippet travels to Chroma as a document (its code) plus flat metadata. Chroma metadata holds only
str, int, float and bool values, so the tests (a list) are stored as a JSON string and decoded again
when a snippet or candidate comes back; `to_metadata` and `decode_metadata` are that one mapping.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from pathlib import Path, PurePath
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from guardrail.errors import SpecError
from guardrail.spec import Spec

__all__ = [
    "RESERVED_KEYS",
    "MetadataValue",
    "Snippet",
    "decode_metadata",
    "location",
    "stored_location",
]

MetadataValue = str | int | float | bool

_JSON_KEYS = frozenset({"tests"})
RESERVED_KEYS = frozenset(
    {
        "entry_point",
        "qualified_name",
        "file",
        "module",
        "root",
        "start_line",
        "end_line",
        "docstring",
        "signature",
        "tests",
        "setup",
        "content_sha256",
    }
)


class Snippet(BaseModel):
    """A code snippet with what the index knows about it.

    Attributes:
        code: the source text (what is embedded and what a candidate hands over).
        entry_point: the name tests call (the function's name for split source files).
        qualified_name: ``Class.method`` for methods, the function name otherwise.
        file: where it came from: for split files the path relative to ``root``, posix
            (collections written before module contexts hold the resolved absolute path).
        module: the dotted module name ``file`` is imported as (``pkg.mod``).
        root: the folder on ``sys.path`` that ``file`` and ``module`` are relative to
            (absolute); see `guardrail.context`.
        start_line, end_line: 1-based inclusive line range in ``file``, decorators included.
        docstring: the cleaned docstring.
        signature: ``def name(args) -> ret``.
        tests: test statements that verify this snippet (doctest examples for split files).
        setup: code the tests need first (imports).
        extra: any other metadata (str, int, float, bool); must not reuse the names above.
        id: the index id; derived from the content when not given (see `content_id`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    code: str
    entry_point: str = ""
    qualified_name: str = ""
    file: str = ""
    module: str = ""
    root: str = ""
    start_line: int = 0
    end_line: int = 0
    docstring: str = ""
    signature: str = ""
    tests: list[str] = Field(default_factory=list)
    setup: str = ""
    extra: dict[str, MetadataValue] = Field(default_factory=dict)
    id: str | None = None

    @field_validator("code")
    @classmethod
    def _code_not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("code is empty")
        return value

    @field_validator("extra")
    @classmethod
    def _extra_keys_free(cls, value: dict[str, MetadataValue]) -> dict[str, MetadataValue]:
        clash = sorted(RESERVED_KEYS & value.keys())
        if clash:
            raise ValueError(f"extra metadata reuses reserved keys {clash}")
        return value

    @model_validator(mode="after")
    def _tests_parse(self) -> Snippet:
        # Stored tests must be usable later: validate them as a Spec would, now.
        if self.tests:
            try:
                Spec.build(self.tests, self.entry_point or "_", self.setup)
            except SpecError as exc:
                where = self.qualified_name or self.entry_point or "snippet"
                raise SpecError(f"{self.file or '<snippet>'}: {where}: {exc}") from None
        return self

    @property
    def content_id(self) -> str:
        """sha256 of code, qualified name and file (and root, when there is one: two checkouts
        of one package hold the same relative files): the same snippet always gets the same id.
        """
        return _sha256(
            [self.code, self.qualified_name, self.file, *([self.root] * bool(self.root))]
        )

    @property
    def path(self) -> str:
        """Where the snippet's file is: ``root`` joined with ``file``, or ``file`` alone."""
        return location(self.file, self.root)

    @property
    def index_id(self) -> str:
        """The id used in the index: `id` when given, else `content_id`."""
        return self.id or self.content_id

    @property
    def content_sha256(self) -> str:
        """sha256 of everything stored, so a changed snippet under the same id is noticed."""
        return _sha256(self.model_dump(mode="json", exclude={"id"}))

    def to_metadata(self) -> dict[str, MetadataValue]:
        """Flat Chroma metadata: scalar fields, ``tests`` as JSON, the extras, the content hash."""
        fields = self.model_dump(exclude={"code", "extra", "id"})
        metadata: dict[str, MetadataValue] = {
            key: json.dumps(value) if key in _JSON_KEYS else value for key, value in fields.items()
        }
        metadata.update(self.extra)
        metadata["content_sha256"] = self.content_sha256
        return metadata

    @classmethod
    def from_stored(cls, id_: str, code: str, metadata: Mapping[str, Any] | None) -> Snippet:
        """Rebuild a snippet from what Chroma returns (tolerates collections we did not write)."""
        decoded = decode_metadata(metadata)
        known = {key: decoded[key] for key in RESERVED_KEYS - {"content_sha256"} if key in decoded}
        extra = {
            key: value
            for key, value in decoded.items()
            if key not in RESERVED_KEYS and isinstance(value, MetadataValue)
        }
        return cls(code=code, id=id_, extra=extra, **known)


def location(file: str, root: str = "") -> str:
    """The file's path on the host: ``root/file`` for a relative ``file``, else ``file``."""
    if root and file and not PurePath(file).is_absolute():
        return str(Path(root, file))
    return file


def stored_location(metadata: Mapping[str, Any]) -> str | None:
    """`location` of stored metadata, None when it names no file."""
    file, root = metadata.get("file"), metadata.get("root")
    if not isinstance(file, str) or not file:
        return None
    return location(file, root if isinstance(root, str) else "")


def decode_metadata(metadata: Mapping[str, Any] | None) -> dict[str, Any]:
    """Chroma metadata back to Python values: JSON-encoded keys (``tests``) become lists again.

    A value that is not valid JSON is left as it is, so foreign collections still load.
    """
    decoded = dict(metadata or {})
    for key in _JSON_KEYS & decoded.keys():
        value = decoded[key]
        if isinstance(value, str):
            try:
                decoded[key] = json.loads(value)
            except json.JSONDecodeError:
                continue
    return decoded


def _sha256(value: Any) -> str:
    canonical = json.dumps(value, sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
