"""The sandbox image: its content-hashed default tag and the offline build.

The recipe (``image/recipe.sh``: debootstrap of Debian bookworm minbase with python3, then a
hand-written image archive for ``docker load``) needs no registry. The tag ends in the first 12 hex
digits of the recipe's sha256, so a changed recipe gives a new tag and an old image is never
mistaken for the new one.

The build is reproducible: the same recipe over the same packages gives the same image *id* on any
engine (sorted tar members, numeric owners, mtimes clamped to ``SOURCE_DATE_EPOCH``, a fixed
creation date in the config; see the recipe's header). Every node of a cluster must run the same
id (it is part of the verdict identity), so `export_image` and `import_image` copy one image
between engines over ``docker save|load`` and check the id on arrival.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import tarfile
from importlib import resources
from pathlib import Path
from typing import Any

from guardrail.errors import EngineUnavailableError, ImageNotFoundError, InputError, SandboxError

__all__ = [
    "IMAGE_REPOSITORY",
    "archive_image_ids",
    "build_image",
    "default_image",
    "export_image",
    "import_image",
    "recipe_path",
]

IMAGE_REPOSITORY = "guardrail-sandbox"


def recipe_path() -> Path:
    return Path(str(resources.files("guardrail.sandbox") / "image" / "recipe.sh"))


def default_image() -> str:
    """``guardrail-sandbox:<sha256(recipe)[:12]>``: the tag `build_image` produces."""
    digest = hashlib.sha256(recipe_path().read_bytes()).hexdigest()[:12]
    return f"{IMAGE_REPOSITORY}:{digest}"


def build_image(tag: str | None = None) -> str:
    """Build the sandbox image with the recipe (needs root, debootstrap and a Debian mirror).

    Returns the tag. The recipe's progress streams to this process's stderr.
    """
    tag = tag or default_image()
    missing = [tool for tool in ("debootstrap", "docker", "bash") if shutil.which(tool) is None]
    if missing:
        raise SandboxError(
            f"cannot build the sandbox image: {', '.join(missing)} not found",
            hint="run `scripts/docker-up` (installs them with apt when run as root)",
        )
    # Its stdout (the tag and the id) is read, not shown: the caller reports what was built.
    completed = subprocess.run(
        ["bash", str(recipe_path()), tag], check=False, stdout=subprocess.PIPE
    )
    if completed.returncode != 0:
        raise SandboxError(f"the sandbox image recipe failed with exit code {completed.returncode}")
    return tag


def _engine(client: Any) -> Any:
    if client is not None:
        return client
    import docker

    try:
        engine = docker.from_env()
        engine.ping()
    except Exception as exc:
        raise EngineUnavailableError(f"no Docker engine answers: {exc}") from None
    return engine


def export_image(image: str, path: Path, *, client: Any = None) -> str:
    """Write ``image`` (tag or id) to ``path`` as a ``docker save`` archive; return its id.

    The archive keeps the tag, so `import_image` on another engine gives the same tag and id.
    """
    import docker.errors

    engine = _engine(client)
    try:
        found = engine.images.get(image)
        with path.open("wb") as handle:
            for chunk in found.save(named=True):
                handle.write(chunk)
    except docker.errors.ImageNotFound:
        raise ImageNotFoundError(f"image {image!r} is not in the Docker engine") from None
    except docker.errors.APIError as exc:
        path.unlink(missing_ok=True)
        raise EngineUnavailableError(f"the Docker engine failed to save {image!r}: {exc}") from None
    finally:
        if client is None:
            engine.close()
    return str(found.id)


def archive_image_ids(path: Path) -> list[str]:
    """The image ids a ``docker save`` archive holds (``sha256:`` + the config's digest).

    Read from the archive itself, so `import_image` can check what the engine reports against
    what the file says, whatever the engine's storage.
    """
    try:
        with tarfile.open(path) as archive:
            manifest = json.loads(_member(archive, "manifest.json"))
            ids = [
                "sha256:" + hashlib.sha256(_member(archive, str(entry["Config"]))).hexdigest()
                for entry in manifest
            ]
    except (OSError, KeyError, ValueError, TypeError, tarfile.TarError) as exc:
        raise InputError(
            f"{path} is not an image archive of `guardrail sandbox export` or `docker save`"
            f" ({type(exc).__name__}: {exc})"
        ) from None
    return ids


def _member(archive: tarfile.TarFile, name: str) -> bytes:
    handle = archive.extractfile(name)
    if handle is None:  # a directory or link of that name
        raise KeyError(name)
    return handle.read()


def import_image(path: Path, *, client: Any = None) -> list[str]:
    """Load a ``docker save`` archive into the engine; return the ids loaded.

    Raises `SandboxError` when the engine reports other ids than the archive holds (an image
    changed on the way is refused rather than judged under).
    """
    import docker.errors

    expected = archive_image_ids(path)
    engine = _engine(client)
    try:
        with path.open("rb") as handle:
            loaded = engine.images.load(handle)
    except docker.errors.APIError as exc:
        raise EngineUnavailableError(f"the Docker engine failed to load {path}: {exc}") from None
    finally:
        if client is None:
            engine.close()
    ids = sorted({str(image.id) for image in loaded})
    if ids != sorted(set(expected)):
        raise SandboxError(
            f"loading {path} gave image ids {', '.join(ids) or 'none'};"
            f" the archive holds {', '.join(expected)}"
        )
    return ids
