"""Writing files all or nothing: every file in place, or none changed."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from guardrail_eval.errors import OutputError

__all__ = ["write_text_atomically"]


def write_text_atomically(files: Mapping[Path, str]) -> None:
    """Write each file to a temporary sibling, then rename them all into place.

    Nothing is renamed until every file has been written, so an error leaves no half-written
    file behind (the temporaries are removed).

    Raises:
        OutputError: a folder cannot be created or a file cannot be written.
    """
    written: list[tuple[Path, Path]] = []
    umask = os.umask(0)
    os.umask(umask)
    try:
        for path, text in files.items():
            path.parent.mkdir(parents=True, exist_ok=True)
            with tempfile.NamedTemporaryFile(
                "w", encoding="utf-8", dir=path.parent, prefix=f".{path.name}.", delete=False
            ) as handle:
                written.append((Path(handle.name), path))
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
                # NamedTemporaryFile is 0600; the result should look like any file we write.
                os.chmod(handle.name, 0o666 & ~umask)
        for temporary, path in written:
            os.replace(temporary, path)
    except OSError as exc:
        for temporary, _ in written:
            temporary.unlink(missing_ok=True)
        target = exc.filename or next(iter(files), "")
        raise OutputError(f"cannot write {target}: {exc.strerror or exc}") from None
