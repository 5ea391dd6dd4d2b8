"""Wheels zipped by hand, for tests that need one pip would not build (a foreign platform tag,
a startup hook)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path


def hand_wheel(folder: Path, name: str, files: dict[str, str], tag: str = "py3-none-any") -> Path:
    """A wheel zipped by hand: ``files`` (path -> text) plus its metadata and RECORD."""
    info = f"{name}-1.0.dist-info"
    files = {
        **files,
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n",
        f"{info}/WHEEL": (
            f"Wheel-Version: 1.0\nGenerator: test\nRoot-Is-Purelib: true\nTag: {tag}\n"
        ),
    }
    record = []
    for path, text in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(text.encode()).digest()).rstrip(b"=")
        record.append(f"{path},sha256={digest.decode()},{len(text.encode())}")
    files[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{name}-1.0-{tag}.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in files.items():
            archive.writestr(path, text)
    return wheel
