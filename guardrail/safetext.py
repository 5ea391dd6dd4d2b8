"""Text that came from candidates or pools, made safe to store and to show.

Candidate code controls its exception type names, messages and output; an index or a pool
controls ids, names, bug types and queries. Any of it may carry terminal escape sequences (ESC,
OSC 0 retitles the terminal, OSC 8 plants a hyperlink, CSI 2J clears the screen), Rich markup
(``[bold green]verified[/]``), Markdown or HTML, bidirectional overrides that make text read
differently from what it is ("Trojan Source"), lone surrogates that no UTF-8 file, SQLite row or
JSON encoder accepts, or megabytes of text. Every output goes through one of these helpers:

* `clean` - escape what is unsafe as visible ``\\xNN`` / ``\\uNNNN`` text and cap the length;
* `one_line` - the same, also escaping newlines and tabs, for table cells and names;
* `identifier` - identifier characters only, for words a program matches (exception type names);
* `markdown`, `html` - escapers for ``report.md`` and ``report.html`` (they `clean` too);
* `cell` - a Rich `Text` that never interprets markup;
* `dumps_json` - JSON text that always encodes as UTF-8 and round-trips the exact strings.

`clean`, `one_line` and `identifier` are idempotent (applying one twice gives what applying it
once gives), so validated data re-validated is unchanged. Backslashes are not escaped, for that
reason: a literal ``\\x1b`` in the input and an escaped ESC look the same, which is harmless for
display. `markdown` and `html` escape for one output and are applied once, when rendering.
"""

from __future__ import annotations

import html as html_module
import json
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # Rich is imported on first use: verdicts are built where no CLI runs
    from rich.style import Style
    from rich.text import Text

__all__ = [
    "CELL_LIMIT",
    "NAME_LIMIT",
    "TEXT_LIMIT",
    "cell",
    "clean",
    "dumps_json",
    "html",
    "identifier",
    "markdown",
    "one_line",
]

TEXT_LIMIT = 4000
"""Default cap of `clean`: messages and details."""
CELL_LIMIT = 300
"""Default cap of `one_line` and `cell`: one table cell."""
NAME_LIMIT = 100
"""Default cap of `identifier`: a type or function name."""

# C0 controls but tab and newline, DEL, C1 controls, bidi controls (embeddings, overrides,
# isolates and the three marks), the line and paragraph separators (they break lines in editors
# and JS), and every surrogate code point (in a str a surrogate is lone: it cannot be encoded).
_UNSAFE_CHARS = (
    "\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069"
    "\ud800-\udfff"
)
_UNSAFE = re.compile(f"[{_UNSAFE_CHARS}]")
_UNSAFE_LINE = re.compile(f"[\t\n{_UNSAFE_CHARS}]")
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_NOT_IDENTIFIER = re.compile(r"[^\w.]")  # \w is Unicode-aware and never matches a control
_MARKER = "[... {} more characters]"
_OUR_ESCAPE = re.compile(r"\\(?:x[0-9a-f]{2}|u[0-9a-f]{4}|[ntr])")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    if char in _NAMED:
        return _NAMED[char]
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def _cap(text: str, limit: int, separator: str) -> str:
    """``text`` if it is at most ``limit`` long, else its start and a marker, ``limit`` in all.

    The result is never longer than ``limit``, so capping it again leaves it alone.
    """
    if len(text) <= limit:
        return text
    keep = max(limit - len(separator) - len(_MARKER.format(len(text))), 0)
    # Never end inside one of our own escapes (the ``\\udc`` of ``\\udc80``): cut before it.
    start = text.rfind("\\", max(keep - 5, 0), keep)
    if start >= 0 and (escape := _OUR_ESCAPE.match(text, start)) and escape.end() > keep:
        keep = start
    return (text[:keep] + separator + _MARKER.format(len(text) - keep))[:limit]


def clean(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` with unsafe characters escaped and at most ``limit`` characters long.

    Escaped: C0 controls except newline and tab (a carriage return would let text overwrite the
    start of its line, so it is escaped as ``\\r``), ESC always, DEL, C1 controls, bidi controls
    (U+202A-E, U+2066-9, U+200E/F, U+061C), U+2028/9, and surrogates (``\\udc80``). Longer text
    keeps its start and ends with ``[... N more characters]``.
    """
    return _cap(_UNSAFE.sub(_escape, text), limit, "\n")


def one_line(text: str, limit: int = CELL_LIMIT) -> str:
    """`clean`, with newlines and tabs escaped too (``\\n``, ``\\t``): one line of text."""
    return _cap(_UNSAFE_LINE.sub(_escape, text), limit, " ")


def identifier(text: str, limit: int = NAME_LIMIT) -> str:
    """``text`` reduced to identifier characters (letters, digits, ``_`` and ``.``).

    Every other character becomes ``?``; longer names are cut to ``limit`` ending in ``...``.
    For words that programs and readers match exactly, such as an exception's type name.
    """
    name = _NOT_IDENTIFIER.sub("?", text) or "?"
    return name if len(name) <= limit else name[: max(limit - 3, 0)] + "..."


# Markdown: characters that start markup anywhere in a line (CommonMark's inline syntax, tables,
# GitHub's $math$ and ~strike~), escaped with a backslash; `<` and `&` become entities, which
# keeps raw HTML and entities out. Characters that only matter at the start of a line (headings,
# quotes, lists) are escaped there.
# A run of `_` inside a word can neither open nor close emphasis (CommonMark), so it is left as is.
_MD_INLINE = re.compile(r"[\\`*\[\]|~$!]|(?<!\w)_+|_+(?!\w)")
_MD_LINE_START = re.compile(r"^(\s*)(>|[#+-](?=[\s#+-]|$))|^(\s*\d{1,9})([.)])(?=\s|$)")


def markdown(text: str, limit: int = CELL_LIMIT) -> str:
    """``text`` as literal Markdown inline text: one line, no markup, no raw HTML, capped."""
    line = one_line(text, limit)
    escaped = _MD_INLINE.sub(lambda found: "".join("\\" + c for c in found.group()), line)
    escaped = escaped.replace("&", "&amp;").replace("<", "&lt;")
    return _MD_LINE_START.sub(_escape_line_start, escaped)


def _escape_line_start(found: re.Match[str]) -> str:
    indent, mark = (found[1], found[2]) if found[2] else (found[3], found[4])
    return f"{indent}\\{mark}"


def html(text: str, limit: int = TEXT_LIMIT) -> str:
    """``text`` as HTML text or attribute content: `clean`, then ``& < > " '`` escaped."""
    return html_module.escape(clean(text, limit), quote=True)


def cell(text: str, style: str | Style = "", limit: int = CELL_LIMIT) -> Text:
    """A Rich `Text` of `one_line` ``text``: shown as is, whatever brackets it contains."""
    from rich.text import Text

    return Text(one_line(text, limit), style=style)


def _escape_json(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


# Controls below U+0020 are escaped by `json.dumps` itself; these are what it leaves raw.
_UNSAFE_JSON = re.compile(
    "[\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]"
)


def dumps_json(data: object, indent: int | None = 2, *, ascii_only: bool = False) -> str:
    """``json.dumps(data)`` as readable UTF-8 that always encodes and never reaches a terminal raw.

    Lone surrogates, DEL, C1 controls and bidi controls are written as ``\\uNNNN`` escapes (they
    can only occur inside JSON strings), so loading the text gives back exactly the same strings.
    ``ascii_only`` escapes every non-ASCII character too: for standard output, whose encoding
    may not be UTF-8.
    """
    text = json.dumps(data, indent=indent, ensure_ascii=ascii_only)
    return text if ascii_only else _UNSAFE_JSON.sub(_escape_json, text)
