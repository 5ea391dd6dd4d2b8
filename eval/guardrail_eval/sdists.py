"""Pinned sdists of pure-Python libraries: downloaded once into a cache folder, then unpacked.

The sdist's top folder is the ``sys.path`` root of the library (``more_itertools/`` sits in it),
so it is what gets indexed, and what a real-code pool copies into its ``context/``. The download
is ``pip download --no-binary :all: --no-deps``: pip prepares the sdist's metadata with its build
backend on the host (as any ``pip download`` of an sdist does); the library's own modules are
only parsed on the host, never imported, and run only in the sandbox.
"""

from __future__ import annotations

import hashlib
import re
import subprocess
import sys
import tarfile
from pathlib import Path

from guardrail.errors import InputError

__all__ = ["SDISTS", "SdistError", "fetch", "fetch_pins", "parse_pin", "sha256_of"]

SDISTS: dict[str, str] = {"more-itertools": "10.5.0", "toolz": "1.0.0", "boltons": "24.1.0"}
"""Library -> pinned version. All three are pure Python with no runtime dependencies."""

_PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==([A-Za-z0-9][A-Za-z0-9.+!_-]*)$")


class SdistError(InputError):
    """A pinned sdist that cannot be had: a malformed pin, or a download or unpack failure."""

    hint = "give NAME==VERSION of a package whose source distribution is on the package index"


def parse_pin(pin: str) -> tuple[str, str]:
    """``"toolz==1.0.0"`` -> ``("toolz", "1.0.0")``; only exact pins (a build must be repeatable).

    Raises:
        SdistError: anything but ``NAME==VERSION``.
    """
    found = _PIN.match(pin.strip())
    if found is None:
        raise SdistError(f"{pin!r} is not an exact pin NAME==VERSION (for example toolz==1.0.0)")
    return found.group(1), found.group(2)


def fetch(cache: Path, name: str, version: str) -> Path:
    """The unpacked sdist of ``name==version`` under ``cache`` (downloaded on first use only).

    Raises:
        SdistError: pip cannot download it, or the archive cannot be unpacked.
    """
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"{name}-{version}"
    if target.is_dir():
        return target
    archive = _archive(cache, name, version)
    if archive is None:
        command = [sys.executable, "-m", "pip", "download", "--no-binary", ":all:", "--no-deps"]
        command += ["--dest", str(cache), f"{name}=={version}"]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        archive = _archive(cache, name, version)
        if done.returncode != 0 or archive is None:
            said = (done.stderr.strip().splitlines() or ["no output"])[-1]
            raise SdistError(f"cannot download the sdist of {name}=={version}: pip said {said}")
    unpacked = cache / f".unpack-{name}-{version}"
    try:
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
        (top,) = [path for path in unpacked.iterdir() if path.is_dir()]
    except (OSError, tarfile.TarError, ValueError) as exc:
        raise SdistError(f"cannot unpack {archive}: {exc}") from None
    top.rename(target)  # atomic: a half-unpacked tree is never taken for a finished one
    unpacked.rmdir()
    return target


def sha256_of(cache: Path, name: str, version: str) -> str | None:
    """The sha256 of the downloaded archive of ``name==version`` (provenance), if it is there."""
    archive = _archive(cache, name, version)
    return None if archive is None else hashlib.sha256(archive.read_bytes()).hexdigest()


def _archive(cache: Path, name: str, version: str) -> Path | None:
    pattern = f"{re.sub(r'[-_.]', '[-_.]', name)}-{version}.tar.gz"
    found = sorted(cache.glob(pattern))
    return found[0] if found else None


def fetch_pins(pins: list[str], cache: Path) -> tuple[list[Path], list[str]]:
    """The unpacked trees of ``NAME==VERSION`` pins, and a provenance note for each.

    Raises:
        SdistError: a pin is malformed or cannot be had.
    """
    trees: list[Path] = []
    notes: list[str] = []
    for pin in pins:
        name, version = parse_pin(pin)
        trees.append(fetch(cache, name, version))
        notes.append(f"sdist {name}=={version} sha256 {sha256_of(cache, name, version)}")
    return trees, notes
