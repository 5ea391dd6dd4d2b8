"""Pinned sdists of pure-Python libraries: downloaded once into a cache folder, then unpacked.

The sdist's top folder is the sys.path root of the library (``more_itertools/`` sits in it), so
it is what gets indexed and what the ground-truth container puts on ``PYTHONPATH``.
"""

from __future__ import annotations

import subprocess
import sys
import tarfile
from pathlib import Path

__all__ = ["SDISTS", "fetch", "module_of"]

SDISTS: dict[str, str] = {"more-itertools": "10.5.0", "toolz": "1.0.0", "boltons": "24.1.0"}
"""Library -> pinned version. All three are pure Python with no runtime dependencies."""


def fetch(cache: Path, name: str, version: str) -> Path:
    """The unpacked sdist of ``name==version`` under ``cache`` (downloaded on first use only)."""
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"{name}-{version}"
    if target.is_dir():
        return target
    pattern = f"{name.replace('-', '[-_]')}-{version}.tar.gz"
    archives = sorted(cache.glob(pattern))
    if not archives:
        command = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
        command += ["--dest", str(cache), f"{name}=={version}"]
        subprocess.run(command, check=True, capture_output=True)
        archives = sorted(cache.glob(pattern))
    if not archives:
        raise RuntimeError(f"pip download left no {pattern} in {cache}")
    unpacked = cache / f".unpack-{name}-{version}"
    with tarfile.open(archives[0]) as tar:
        tar.extractall(unpacked, filter="data")
    (top,) = [path for path in unpacked.iterdir() if path.is_dir()]
    top.rename(target)  # atomic: a half-unpacked tree is never taken for a finished one
    unpacked.rmdir()
    return target


def module_of(file: str, root: Path) -> str:
    """The dotted module name of ``file`` (absolute, or relative to ``root``)."""
    path = Path(file)
    relative = path.relative_to(root.resolve()) if path.is_absolute() else path
    parts = relative.with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
