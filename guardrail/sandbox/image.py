"""The sandbox image: its content-hashed default tag and the offline build.

The recipe (``image/recipe.sh``: debootstrap of Debian bookworm minbase with python3, then
``docker import``) needs no registry. The tag ends in the first 12 hex digits of the recipe's
sha256, so a changed recipe gives a new tag and an old image is never mistaken for the new one.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from guardrail.errors import SandboxError

__all__ = ["IMAGE_REPOSITORY", "build_image", "default_image", "recipe_path"]

IMAGE_REPOSITORY = "guardrail-sandbox"


def recipe_path() -> Path:
    return Path(str(resources.files("guardrail.sandbox") / "image" / "recipe.sh"))


def default_image() -> str:
    """``guardrail-sandbox:<sha256(recipe)[:12]>``: the tag `build_image` produces."""
    digest = hashlib.sha256(recipe_path().read_bytes()).hexdigest()[:12]
    return f"{IMAGE_REPOSITORY}:{digest}"


def build_image(tag: str | None = None) -> str:
    """Build the sandbox image with the recipe (needs root, debootstrap and a Debian mirror).

    Returns the tag. The recipe's output streams to this process's stderr.
    """
    tag = tag or default_image()
    missing = [tool for tool in ("debootstrap", "docker", "bash") if shutil.which(tool) is None]
    if missing:
        raise SandboxError(
            f"cannot build the sandbox image: {', '.join(missing)} not found",
            hint="run `scripts/docker-up` (installs them with apt when run as root)",
        )
    completed = subprocess.run(["bash", str(recipe_path()), tag], check=False)
    if completed.returncode != 0:
        raise SandboxError(f"the sandbox image recipe failed with exit code {completed.returncode}")
    return tag
