"""Reading a user's text file, with one typed, located error for each way it can fail."""

from __future__ import annotations

from pathlib import Path

from guardrail.errors import InputError

__all__ = ["read_text"]


def read_text(path: Path, error: type[InputError], what: str = "") -> str:
    """``path`` as UTF-8 text; ``error("<path>: ...")`` when it is missing, not UTF-8 or unreadable.

    ``what`` names the file's role in the messages (``"tests"``: "no such tests file").
    """
    role = f"{what} " if what else ""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise error(f"{path}: no such {role}file") from None
    except UnicodeDecodeError as exc:
        raise error(f"{path}: {role}not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise error(f"{path}: cannot read {role}file: {exc.strerror}") from None
