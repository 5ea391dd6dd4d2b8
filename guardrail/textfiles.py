"""Reading a user's text files, with one typed, located error for each way they can fail.

Files with a size limit are measured before they are read, and JSON Lines are read one line at a
time with a cap per line, so a 50 MB tests file or a 100 MB line costs an error, not the memory.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from guardrail.errors import InputError
from guardrail.precheck import MAX_CODE_BYTES

__all__ = ["MAX_JSONL_LINE_BYTES", "json_kind", "read_jsonl", "read_text"]

# Room for one candidate at the sandbox's limit written with \uXXXX escapes (6 bytes a character,
# what json.dumps writes by default) and the row's other fields.
MAX_JSONL_LINE_BYTES = 6 * MAX_CODE_BYTES + (1 << 20)

_UTF8_BOM = b"\xef\xbb\xbf"


def read_text(
    path: Path, error: type[InputError], what: str = "", *, max_bytes: int | None = None
) -> str:
    """``path`` as UTF-8 text; ``error("<path>: ...")`` when it is missing, not UTF-8 or unreadable.

    ``what`` names the file's role in the messages (``"tests"``: "no such tests file").
    With ``max_bytes``, a larger file is an error before it is read (and a pipe, whose size is
    unknown, is read no further than the limit).
    """
    role = f"{what} " if what else ""
    try:
        with path.open(encoding="utf-8") as handle:
            if max_bytes is None:
                return handle.read()
            size = os.fstat(handle.fileno()).st_size
            if size > max_bytes:
                raise error(
                    f"{path}: the {role}file takes {size:,} bytes; the limit is {max_bytes:,}"
                )
            text = handle.read(max_bytes + 1)  # so many characters take at least as many bytes
    except FileNotFoundError:
        raise error(f"{path}: no such {role}file") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {role}not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise error(f"{path}: cannot read {role}file: {exc.strerror}") from None
    if len(text) > max_bytes:
        raise error(f"{path}: the {role}file takes more than the limit of {max_bytes:,} bytes")
    return text


def read_jsonl(
    path: Path,
    error: Callable[[int | None, str], InputError],
    *,
    missing: str = "no such file",
    max_line_bytes: int = MAX_JSONL_LINE_BYTES,
) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` for every non-blank line of a JSON Lines file.

    Every problem is ``error(line or None, problem)``: the caller's error type, located.
    """
    try:
        handle = path.open("rb")
    except FileNotFoundError:
        raise error(None, missing) from None
    except OSError as exc:
        raise error(None, f"cannot read: {exc.strerror or exc}") from None
    with handle:
        number = 0
        while True:
            try:
                data = handle.readline(max_line_bytes + 1)
            except OSError as exc:
                raise error(number + 1, f"cannot read: {exc.strerror or exc}") from None
            if not data:
                return
            number += 1
            if len(data) > max_line_bytes:
                raise error(number, f"the line is over the limit of {max_line_bytes:,} bytes")
            if number == 1:
                data = data.removeprefix(_UTF8_BOM)
            if data.strip():
                yield number, _json_object(data, number, error)


def _json_object(
    data: bytes, number: int, error: Callable[[int | None, str], InputError]
) -> dict[str, Any]:
    try:
        row = json.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise error(number, f"not UTF-8 text: {exc.reason}") from None
    except json.JSONDecodeError as exc:
        raise error(number, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:  # [[[[...]]]] nested past the decoder's depth
        raise error(number, "not valid JSON: nested too deeply") from None
    if not isinstance(row, dict):
        raise error(number, f"expected a JSON object, got {json_kind(row)}")
    return row


def json_kind(value: object) -> str:
    """What a decoded JSON value is, in JSON's words (``"a list"`` for an array)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"
