"""The pinned sdists (`guardrail_eval.sdists`, shared with ``guardrail eval build-pool``), the
set of pins a run measures, and module names of their files.

The import root of an sdist is the folder on ``sys.path`` above its packages: the sdist's top
folder (``more_itertools/`` sits in it), or its ``src/`` for a src layout. It is what gets indexed
and what the ground-truth container puts on ``PYTHONPATH``.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from guardrail_eval.sdists import SDISTS, SdistError, fetch, parse_pin

__all__ = ["SDISTS", "SdistError", "fetch", "import_root", "module_of", "pins_key", "read_pins"]


def read_pins(pins: list[str], files: list[Path]) -> dict[str, str]:
    """Library -> version of the ``NAME==VERSION`` pins and pin files (one pin a line, ``#``
    comments); `SDISTS` when none is given. In the order given.

    Raises:
        SdistError: a malformed pin, an unreadable file, or one library pinned twice.
    """
    given = list(pins)
    for file in files:
        try:
            text = file.read_text(encoding="utf-8")
        except OSError as exc:
            raise SdistError(f"cannot read the pin file {file}: {exc}") from None
        given += [line.split("#", 1)[0].strip() for line in text.splitlines()]
    chosen: dict[str, str] = {}
    for pin in filter(None, given):
        name, version = parse_pin(pin)
        if chosen.get(name, version) != version:
            raise SdistError(f"{name} is pinned twice ({chosen[name]} and {version})")
        chosen[name] = version
    return chosen or dict(SDISTS)


def pins_key(pins: dict[str, str]) -> str:
    """A short name for a set of pins, the same for the same set in any order."""
    text = "\n".join(f"{name}=={version}" for name, version in sorted(pins.items()))
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def import_root(top: Path) -> Path:
    """The folder on ``sys.path`` above the library's code: ``src/`` of a src layout (a ``src``
    folder holding a package or module; the top then holds only tests, docs and tools), else
    ``top``."""
    src = top / "src"
    if src.is_dir() and any(_is_code(path) for path in src.iterdir()):
        return src
    return top


def _is_code(path: Path) -> bool:
    return (path / "__init__.py").is_file() or (path.suffix == ".py" and path.is_file())


def module_of(file: str, root: Path) -> str:
    """The dotted module name of ``file`` (absolute, or relative to ``root``)."""
    path = Path(file)
    relative = path.relative_to(root.resolve()) if path.is_absolute() else path
    parts = relative.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
