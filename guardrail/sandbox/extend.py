"""`extend_image`: a sandbox image with a project's third-party packages, built offline.

Code that imports ``attrs`` or ``six`` cannot be judged on an image that has only the standard
library (verdict reason ``missing_dependency``). This derives an image from any base with
``python3`` (the guardrail image by default, or the user's own):

1. the base's own ``python3`` describes itself in a throwaway container without network
   (`PROBE`): interpreter, version, ABI, glibc, the first site directory it has (the runner's
   interpreters start without ``site``; only candidates add these directories, after the drop);
2. the host resolves the requirements or the wheelhouse into wheels for that interpreter and
   installs them into a staging directory (``wheels.py``; the only step that may use the
   network: the package index, through the host's pip and its configuration);
3. a container of the base, created without network, receives the staged files in its site
   directory (``put_archive``: owned by root, no set-uid bit, nothing writable but by root),
   compiles them with the image's own Python and checks every distribution is importable
   metadata (`FINISH`; no package code runs), then is committed with labels recording the base
   image id and the content hash. The container is removed whatever happens.

The tag is ``guardrail-sandbox-deps:<sha256(base id, inputs)[:16]>`` unless one is given; an
image of that tag with the same labels is reused, not rebuilt. The tag is set by the commit, the
last step, so a failed build leaves no tag behind. The extended image runs under the same
hardening as the base (`DockerSandbox` sets it per container; ``guardrail sandbox check
--image TAG`` proves it).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
import stat
import tarfile
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from guardrail.errors import DependencyError, ImageUnusableError, SandboxError
from guardrail.sandbox.autopsy import has_python, printable
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.shipping import INTERPRETER_FLAGS
from guardrail.sandbox.wheels import (
    Target,
    check_wheels,
    content_hash,
    install,
    read_requirements,
    resolve,
    wheelhouse_files,
)

__all__ = ["DEPS_REPOSITORY", "ExtendedImage", "dependency_hint", "extend_image"]

DEPS_REPOSITORY = "guardrail-sandbox-deps"
BASE_LABEL = "guardrail.deps.base"
HASH_LABEL = "guardrail.deps.hash"
PACKAGES_LABEL = "guardrail.deps.packages"
_MIN_PYTHON = (3, 10)
_FINISH_TIMEOUT_S = 600

PROBE = """
import json, os, platform, site, sys, sysconfig
try:
    libc = os.confstr("CS_GNU_LIBC_VERSION") or ""
except (ValueError, OSError):
    libc = ""
site.venv(None)  # as a candidate adds them (runner.zygote.add_project_packages)
sites = [p for p in site.getsitepackages() if os.path.isdir(p)]
print(json.dumps({
    "implementation": sys.implementation.name, "version": list(sys.version_info[:3]),
    "abiflags": sys.abiflags, "machine": platform.machine(), "platform": sysconfig.get_platform(),
    "libc": libc, "site": sites[0] if sites else "",
}))
"""

# Compiles the new files with the image's Python (its root filesystem is read-only in the
# sandbox, so nothing compiled later could be kept; a file that does not compile, such as a
# Python 2 leftover, is skipped as pip skips it) and reads each distribution's version from its
# metadata in the site directory (`PROBE` chose it among those a candidate adds, with
# ``runner.zygote.add_project_packages``). No package code is imported and no .pth file runs
# (no ``site``): this container becomes the image.
FINISH = """
import compileall, importlib.metadata as metadata, json, os, sys
site, names = sys.argv[1], json.loads(sys.argv[2])
sys.path.append(site)
for entry in json.loads(sys.argv[3]):
    path = os.path.join(site, entry)
    if os.path.isdir(path):
        compileall.compile_dir(path, quiet=2)
    elif path.endswith(".py"):
        compileall.compile_file(path, quiet=2)
found = {}
for name in names:
    try:
        found[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        found[name] = None
print(json.dumps({"versions": found}))
"""


@dataclass(frozen=True)
class ExtendedImage:
    """What `extend_image` made (or found already made)."""

    tag: str
    image_id: str
    base: str
    base_id: str
    python: str
    packages: tuple[str, ...]  # "name==version", sorted
    left_out: tuple[str, ...]  # .pth files not installed: they would run code
    reused: bool


def extend_image(
    base: str | None = None,
    *,
    requirements: Path | None = None,
    wheelhouse: Path | None = None,
    tag: str | None = None,
    no_index: bool = False,
    force: bool = False,
    client: Any = None,
    progress: Callable[[str], None] | None = None,
) -> ExtendedImage:
    """Build (or reuse) ``base`` + the packages of ``requirements`` and/or ``wheelhouse``.

    ``base``: any image with python3 >= 3.10 (default ``$GUARDRAIL_IMAGE``, else the guardrail
    image). ``wheelhouse`` alone installs every distribution in it, offline; with
    ``requirements`` it is where they are looked for first. ``no_index``: never ask the package
    index. Raises `DependencyError` (bad input, naming the file and line or the wheel),
    `ImageUnusableError` (no usable python3) or another `SandboxError` (engine, image).
    """
    say = progress or (lambda _message: None)
    if requirements is None and wheelhouse is None:
        raise DependencyError("give --requirements FILE, --wheelhouse DIR, or both")
    # Bad input is found before any container starts.
    if requirements is not None:
        read_requirements(requirements)
    if wheelhouse is not None:
        files = wheelhouse_files(wheelhouse)
        if requirements is None:  # every wheel of it is installed
            check_wheels([path for path in files if path.suffix == ".whl"])
    sandbox = DockerSandbox(base, client=client, pool_size=1)
    try:
        base_id = sandbox.image_id
        digest = content_hash(base_id, requirements, wheelhouse, no_index=no_index)
        tag = tag or f"{DEPS_REPOSITORY}:{digest[:16]}"
        existing = _image(sandbox, tag)
        if existing is not None:
            reusable = _reusable(sandbox, existing, tag, digest)
            if reusable is not None and not force:
                return reusable
        say(f"asking {sandbox.image} which Python it runs")
        target = _probe(sandbox)
        with tempfile.TemporaryDirectory(prefix="guardrail-deps-") as scratch:
            wheel_dir, stage = Path(scratch, "wheels"), Path(scratch, "site")
            wheel_dir.mkdir()
            say(f"resolving wheels for Python {target.python} ({target.platforms()[0]})")
            wheels = resolve(
                target,
                wheel_dir,
                requirements=requirements,
                wheelhouse=wheelhouse,
                no_index=no_index,
            )
            left_out = install(target, wheels, stage)
            packages = sorted(_dist_name(wheel) for wheel in wheels)
            say(f"installing {len(packages)} distribution(s) into {target.site}")
            image_id = _commit(sandbox, target, stage, tag, digest, packages)
    finally:
        sandbox.close()
    if existing is not None and str(existing.id) != image_id:  # an older build of ours
        with contextlib.suppress(Exception):  # in use or tagged elsewhere: it stays, untouched
            sandbox.client.images.remove(str(existing.id))
    return ExtendedImage(
        tag=tag,
        image_id=image_id,
        base=sandbox.image,
        base_id=base_id,
        python=target.python,
        packages=tuple(packages),
        left_out=tuple(left_out),
        reused=False,
    )


def _reusable(sandbox: DockerSandbox, existing: Any, tag: str, digest: str) -> ExtendedImage | None:
    """The image already tagged ``tag`` if it was built from the same base and inputs; `None`
    if it is an older build; `DependencyError` if guardrail did not build it (never moved)."""
    labels = existing.attrs["Config"].get("Labels") or {}
    if HASH_LABEL not in labels:
        raise DependencyError(
            f"--tag {tag!r} names an image guardrail did not build ({str(existing.id)[:19]});"
            " it is left as it is",
            hint="choose another tag, or leave --tag out for a content-hashed one",
        )
    if labels[HASH_LABEL] != digest or labels.get(BASE_LABEL) != sandbox.image_id:
        return None
    return ExtendedImage(
        tag=tag,
        image_id=str(existing.id),
        base=sandbox.image,
        base_id=sandbox.image_id,
        python=str(labels.get("guardrail.deps.python", "")),
        packages=tuple(str(labels.get(PACKAGES_LABEL, "")).split()),
        left_out=(),
        reused=True,
    )


def _image(sandbox: DockerSandbox, tag: str) -> Any:
    try:
        return sandbox.client.images.get(tag)
    except Exception as exc:
        if getattr(exc, "status_code", None) == 404:  # docker.errors.ImageNotFound
            return None
        raise sandbox.translate(exc) from None


def _dist_name(wheel: Path) -> str:
    name, version = wheel.name.split("-")[:2]
    return f"{name}=={version}"


def _create(sandbox: DockerSandbox, command: list[str], **options: Any) -> Any:
    """A container of the base without network or capabilities, its own entrypoint cleared."""
    try:
        return sandbox.client.containers.create(
            sandbox.image_id,
            command,
            entrypoint=[""],
            network_mode="none",
            cap_drop=["ALL"],
            security_opt=["no-new-privileges"],
            user="0:0",
            environment={},
            labels={HASH_LABEL: "building"},
            **options,
        )
    except Exception as exc:
        raise sandbox.translate(exc) from None


def _run(sandbox: DockerSandbox, container: Any, timeout_s: float) -> tuple[int, str]:
    """Start ``container``, wait, and return its exit code and output (stdout and stderr)."""
    try:
        container.start()
        code = int(container.wait(timeout=timeout_s).get("StatusCode", -1))
        return code, container.logs().decode(errors="replace")
    except Exception as exc:
        try:
            no_python = not has_python(sandbox.client, container.id)
        except Exception as again:
            raise sandbox.translate(again) from None
        if no_python:
            raise ImageUnusableError(f"image {sandbox.image!r} has no python3 on PATH") from None
        raise sandbox.translate(exc) from None


def _probe(sandbox: DockerSandbox) -> Target:
    container = _create(sandbox, ["python3", *INTERPRETER_FLAGS, "-c", PROBE], read_only=True)
    try:
        code, output = _run(sandbox, container, 120)
    finally:
        sandbox.remove_by_id(container.id)
    try:
        target = Target.from_probe(json.loads(output.strip().splitlines()[-1]))
    except (ValueError, KeyError, IndexError, TypeError):
        raise ImageUnusableError(
            f"image {sandbox.image!r}: python3 did not describe itself (exit code {code}):"
            f" {printable(output[-300:])}"
        ) from None
    if target.version[:2] < _MIN_PYTHON or not target.site:
        raise ImageUnusableError(
            f"image {sandbox.image!r} runs Python {target.python}"
            + ("" if target.site else " without a site-packages directory")
            + "; the sandbox needs 3.10 or later with site-packages"
        )
    return target


def _commit(  # noqa: PLR0917 - one step of extend_image, called once
    sandbox: DockerSandbox,
    target: Target,
    stage: Path,
    tag: str,
    digest: str,
    packages: list[str],
) -> str:
    """Copy the staged site into a container of the base, finish it there, commit it as ``tag``."""
    names = [package.split("==")[0] for package in packages]
    entries = sorted(path.name for path in stage.iterdir())
    arguments = [target.site, json.dumps(names), json.dumps(entries)]
    command = ["python3", *INTERPRETER_FLAGS, "-c", FINISH, *arguments]
    container = _create(sandbox, command)
    try:
        _finish(sandbox, container, target, stage, names)
        base_config = sandbox.client.images.get(sandbox.image_id).attrs["Config"]
        repository, _, version = tag.rpartition(":") if _has_tag(tag) else (tag, "", "latest")
        labels = {
            BASE_LABEL: sandbox.image_id,
            HASH_LABEL: digest,
            "guardrail.deps.python": target.python,
            "guardrail.deps.site": target.site,
            PACKAGES_LABEL: " ".join(packages)[:4000],
        }
        image = container.commit(
            repository=repository,
            tag=version,
            message=f"guardrail: {sandbox.image} + {len(packages)} distribution(s)",
            changes=_restore(base_config, labels),
        )
        return str(image.id)
    except (SandboxError, DependencyError):
        raise
    except Exception as exc:
        raise sandbox.translate(exc) from None
    finally:
        sandbox.remove_by_id(container.id)


def _finish(
    sandbox: DockerSandbox, container: Any, target: Target, stage: Path, names: list[str]
) -> None:
    """Put the staged files into the site directory, run `FINISH`, check what it found."""
    if not container.put_archive(target.site, _archive(stage)):
        raise SandboxError(f"the engine refused the packages for {target.site}")
    code, output = _run(sandbox, container, _FINISH_TIMEOUT_S)
    try:
        found = json.loads(output.strip().splitlines()[-1])["versions"]
    except (ValueError, KeyError, IndexError, TypeError):
        found = None
    if code != 0 or not isinstance(found, dict):
        raise SandboxError(
            f"the image's python3 could not finish the packages (exit code {code}):"
            f" {printable(output[-500:])}"
        )
    missing = [name for name in names if found.get(name) is None]
    if missing:
        raise DependencyError(
            f"installed into {target.site} but invisible to the image's python3:"
            f" {', '.join(missing)}"
        )


def _has_tag(name: str) -> bool:
    # "host:5000/repo" has a colon that is not a tag's.
    return ":" in name.rsplit("/", 1)[-1]


def _restore(base_config: dict[str, Any], labels: dict[str, str]) -> list[str]:
    """Dockerfile instructions that give the image the base's command and entrypoint back (the
    build container ran its own) and our labels. A base without a command gets ``python3``."""
    changes = [f"CMD {json.dumps(base_config.get('Cmd') or ['python3'])}"]
    if base_config.get("Entrypoint"):
        changes.append(f"ENTRYPOINT {json.dumps(base_config['Entrypoint'])}")
    changes += [f"LABEL {key}={json.dumps(value)}" for key, value in labels.items()]
    return changes


def _archive(stage: Path) -> bytes:
    """The staged files as a tar owned by root: directories 0755, files 0644 (0755 if
    executable); no set-uid/set-gid bit, nothing group- or world-writable, no links."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for path in sorted(stage.rglob("*")):
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                continue
            info = archive.gettarinfo(str(path), arcname=str(path.relative_to(stage)))
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            executable = path.is_dir() or bool(path.stat().st_mode & stat.S_IXUSR)
            info.mode = 0o755 if executable else 0o644
            if path.is_file():
                with path.open("rb") as handle:
                    archive.addfile(info, handle)
            else:
                archive.addfile(info)
    return buffer.getvalue()


# ModuleNotFoundError's own words, or a judge's message that quotes the module it names.
_MISSING_MODULE = re.compile(r"(?:No module named|module) '([A-Za-z_][\w.]*)'")


def dependency_hint(message: str) -> str:
    """How to add the missing package, for the message of a ``missing_dependency`` verdict."""
    found = _MISSING_MODULE.search(message)
    module = f"module {found[1].split('.')[0]!r}" if found else "the missing module"
    return (
        f"to judge it, add the distribution that provides {module} to a sandbox image:"
        " `guardrail sandbox build --requirements requirements.txt` (or --wheelhouse DIR), then"
        " pass the tag it prints with --image or $GUARDRAIL_IMAGE"
    )
