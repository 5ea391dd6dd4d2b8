"""The host side of extending a sandbox image: requirements and wheels resolved for the image.

`extend.py` asks the image what it runs (a `Target`: interpreter, version, ABI, platforms, the
site directory on its ``sys.path``); this module turns a requirements file or a wheelhouse into
wheels that interpreter can import, and installs them into a staging directory (``pip install
--target``), all with the host's pip. Nothing here runs in the image, and nothing the packages
contain runs on the host either, except the build of a source distribution (``pip wheel``, as any
``pip install`` would).

* Same interpreter on both sides (implementation, major.minor, platform): ``pip wheel``, which
  also builds pure-Python sdists into wheels. Otherwise ``pip download --only-binary=:all:`` for
  the image's version, ABI and platforms: then every package needs a wheel (build the others on
  a matching machine into the wheelhouse).
* Every wheel is checked against the image's tags, so a compiled wheel for another platform or
  Python is refused, naming the file.
* Startup hooks, defence in depth: the sandbox's own interpreters start without ``site``
  (``runner.boot``), so nothing here could run in its supervisor or judge, but an image is
  never given what would run code in every other interpreter of it. A wheel that puts a
  ``sitecustomize``, ``usercustomize``, ``site`` or ``apport_python_hook`` (which Debian's
  ``sitecustomize`` imports) into the site directory, in any form (source, bytecode, an
  extension module of any ABI tag, a package), is refused, naming the wheel and the member
  (`startup_hooks`). A ``.pth`` file with ``import`` lines is left out and reported (setuptools
  ships one that only a build needs); one that only adds folders is kept: candidates add the
  site directories with their ``.pth`` files, after the privilege drop.
"""

from __future__ import annotations

import hashlib
import json
import posixpath
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.tags import Tag, compatible_tags, cpython_tags
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)

from guardrail.errors import DependencyError, UnavailableError
from guardrail.sandbox.runner.boot import STARTUP_HOOKS

__all__ = [
    "Target",
    "check_wheels",
    "content_hash",
    "install",
    "read_requirements",
    "resolve",
    "startup_hooks",
]

# Bump when the way an image is extended changes, so old extended images are not reused.
FORMAT = 1
_SDIST_SUFFIXES = (".tar.gz", ".zip")
# Where a wheel's member lands in the site directory: its root, or one of these schemes of its
# ``.data`` folder (``pip install --target`` moves the data scheme's files there too).
_SITE_SCHEMES = frozenset({"purelib", "platlib", "data"})
_PIP_TIMEOUT_S = 900


@dataclass(frozen=True)
class Target:
    """The interpreter of an image, as its own ``python3`` describes itself (``extend.PROBE``)."""

    implementation: str  # sys.implementation.name
    version: tuple[int, int, int]
    abiflags: str
    machine: str
    platform: str  # sysconfig.get_platform(), e.g. linux-x86_64
    libc: str  # os.confstr("CS_GNU_LIBC_VERSION"), e.g. "glibc 2.36"; "" elsewhere
    site: str  # the first site directory of the image: where the packages go

    @classmethod
    def from_probe(cls, data: dict[str, Any]) -> Target:
        return cls(
            implementation=str(data["implementation"]),
            version=(int(data["version"][0]), int(data["version"][1]), int(data["version"][2])),
            abiflags=str(data["abiflags"]),
            machine=str(data["machine"]),
            platform=str(data["platform"]),
            libc=str(data["libc"]),
            site=str(data["site"]),
        )

    @property
    def python(self) -> str:
        return ".".join(map(str, self.version))

    @property
    def cpython(self) -> bool:
        return self.implementation == "cpython"

    @property
    def abi(self) -> str:
        return f"cp{self.version[0]}{self.version[1]}{self.abiflags}"

    def platforms(self) -> list[str]:
        """Platform tags the image accepts, most specific first (PEP 600 manylinux, then linux)."""
        arch = self.machine.replace("-", "_").replace(".", "_")
        found = re.fullmatch(r"glibc (\d+)\.(\d+)", self.libc)
        tags = []
        if self.platform.startswith("linux") and found and int(found[1]) == 2:
            lowest = 5 if arch in {"x86_64", "i686"} else 17
            legacy = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
            for minor in range(int(found[2]), lowest - 1, -1):
                tags.append(f"manylinux_2_{minor}_{arch}")
                if minor in legacy:
                    tags.append(f"{legacy[minor]}_{arch}")
        tags.append(self.platform.replace("-", "_").replace(".", "_"))
        return tags

    def tags(self) -> frozenset[Tag]:
        version = self.version[:2]
        platforms = self.platforms()
        if not self.cpython:  # another interpreter: pure-Python wheels only
            return frozenset(compatible_tags(version, None, platforms))
        interpreter = f"cp{version[0]}{version[1]}"
        ours = cpython_tags(version, [self.abi], platforms)
        return frozenset([*ours, *compatible_tags(version, interpreter, platforms)])

    def matches_host(self) -> bool:
        """Whether the host's interpreter would pick the same wheels (then sdists can be built)."""
        return (
            sys.implementation.name == self.implementation
            and sys.version_info[:2] == self.version[:2]
            and sysconfig.get_platform() == self.platform
        )

    def pip_args(self) -> list[str]:
        """pip's options that choose distributions for this interpreter instead of the host's."""
        args = ["--only-binary=:all:", f"--python-version={self.version[0]}.{self.version[1]}"]
        if self.cpython:
            args += ["--implementation=cp", f"--abi={self.abi}", "--abi=abi3", "--abi=none"]
        else:
            args += ["--implementation=py"]  # pip's word for pure-Python distributions only
        return args + [f"--platform={platform}" for platform in self.platforms()]


@dataclass(frozen=True)
class Line:
    """One requirement of a requirements file, and where it is."""

    requirement: Requirement
    where: str  # "FILE:LINE"


def read_requirements(path: Path) -> list[Line]:
    """Parse a requirements file: one PEP 508 requirement a line, ``#`` comments, ``\\`` joins.

    pip's options (``-r``, ``-e``, ``--index-url``...) are refused, naming the line: the build
    takes its index settings from pip's own configuration and local code from ``--wheelhouse``.
    """
    text = _read_text(path, "requirements file")
    lines: list[Line] = []
    pending, start = "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if not pending:
            start = number
        content = re.sub(r"(^|\s)#.*$", "", raw).strip()
        if content.endswith("\\"):
            pending += content[:-1] + " "
            continue
        content, pending = (pending + content).strip(), ""
        if not content:
            continue
        where = f"{path}:{start}"
        if content.startswith("-"):
            raise DependencyError(
                f"{where}: pip options are not supported in the requirements file: {content!r}",
                hint="list one requirement a line (`attrs==23.2.0`); put local packages built as"
                " wheels in a folder and pass --wheelhouse DIR",
            )
        try:
            lines.append(Line(Requirement(content), where))
        except InvalidRequirement as exc:
            raise DependencyError(
                f"{where}: not a requirement: {content!r} ({exc})",
                hint="write one PEP 508 requirement a line, e.g. `attrs>=23` or `six==1.16.0`",
            ) from None
    if not lines:
        raise DependencyError(f"{path}: no requirements in the file (only blanks and comments)")
    return lines


def _read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise DependencyError(f"{path}: no such {what}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise DependencyError(f"{path}: cannot read the {what}: {exc}") from None


def wheelhouse_files(folder: Path) -> list[Path]:
    """The distributions (wheels and sdists) in ``folder``, sorted; other files are ignored."""
    if not folder.is_dir():
        raise DependencyError(f"{folder}: no such wheelhouse folder")
    found = sorted(
        path
        for path in folder.iterdir()
        if path.is_file() and (path.suffix == ".whl" or path.name.endswith(_SDIST_SUFFIXES))
    )
    if not found:
        raise DependencyError(
            f"{folder}: the wheelhouse holds no wheel (.whl) or source distribution",
            hint="build wheels into it with `pip wheel --wheel-dir DIR PACKAGE...`",
        )
    return found


def content_hash(
    base_id: str, requirements: Path | None, wheelhouse: Path | None, *, no_index: bool
) -> str:
    """sha256 of everything that decides the extended image: same inputs, same tag."""
    digest = hashlib.sha256()
    files = [] if wheelhouse is None else wheelhouse_files(wheelhouse)
    parts = {
        "format": FORMAT,
        "base": base_id,
        "requirements": None
        if requirements is None
        else hashlib.sha256(_read_text(requirements, "requirements file").encode()).hexdigest(),
        "wheelhouse": [[p.name, hashlib.sha256(p.read_bytes()).hexdigest()] for p in files],
        "no_index": no_index,
    }
    digest.update(json.dumps(parts, sort_keys=True).encode())
    return digest.hexdigest()


def resolve(
    target: Target,
    dest: Path,
    *,
    requirements: Path | None,
    wheelhouse: Path | None,
    no_index: bool,
) -> list[Path]:
    """Wheels in ``dest`` for the requirements (or the wheelhouse's contents) and their
    dependencies, every one importable by ``target``. Raises `DependencyError` naming the file
    and line (or the wheel) at fault."""
    if requirements is None and wheelhouse is None:
        raise DependencyError("give a requirements file, a wheelhouse folder, or both")
    sources: list[str] = []
    if wheelhouse is not None:
        sources = ["--find-links", str(wheelhouse.resolve())]
    if requirements is not None:
        lines = read_requirements(requirements)
        wanted = ["-r", str(requirements.resolve())]
        origin = {str(canonicalize_name(line.requirement.name)): line.where for line in lines}
        fallback = f"{requirements} (a dependency of its requirements)"
    else:
        assert wheelhouse is not None
        files = _wheelhouse_requirements(target, wheelhouse)
        wanted = list(files)
        no_index = True  # the wheelhouse is the whole input: nothing is downloaded
        origin = {str(canonicalize_name(spec.split("==")[0])): path for spec, path in files.items()}
        fallback = f"{wheelhouse} (a dependency of its wheels)"
    if no_index:
        # Offline, the result depends on the wheelhouse alone: not on pip's configuration
        # (its find-links, constraints), which the content hash does not cover.
        sources += ["--no-index", "--isolated"]
    if target.matches_host():
        # Offline there is no index to take an sdist's build backend from: the host's is used.
        isolation = ["--no-build-isolation"] if no_index else []
        command = ["wheel", "--wheel-dir", str(dest), *isolation]
    else:
        command = ["download", "--dest", str(dest), *target.pip_args()]
    _pip([*command, *sources, *wanted], origin=origin, fallback=fallback)
    wheels = sorted(dest.glob("*.whl"))
    for wheel in wheels:
        if not _wheel_tags(wheel) & target.tags():
            raise DependencyError(
                f"{wheel.name} (resolved for {requirements or wheelhouse}) cannot run on the"
                f" image's Python {target.python} ({target.abi}, {target.platforms()[0]})",
                hint="put a wheel built for the image's Python and platform in --wheelhouse DIR",
            )
    return wheels


def _wheelhouse_requirements(target: Target, folder: Path) -> dict[str, str]:
    """``name==version`` for each distribution in the wheelhouse (and one of its files), each
    checked to have a file the image can use."""
    usable: dict[tuple[str, str], bool] = {}
    names: dict[tuple[str, str], str] = {}
    for path in wheelhouse_files(folder):
        try:
            if path.suffix == ".whl":
                project, release, _build, tags = parse_wheel_filename(path.name)
                fits = bool(tags & target.tags())
            else:
                project, release = parse_sdist_filename(path.name)
                fits = target.matches_host()  # built into a wheel by the host's Python
        except (InvalidWheelFilename, InvalidSdistFilename) as exc:
            raise DependencyError(f"{path}: not a distribution's file name ({exc})") from None
        key = (str(project), str(release))
        usable[key] = usable.get(key, False) or fits
        names.setdefault(key, path.name)
    versions: dict[str, list[str]] = {}
    for (name, version), fits in usable.items():
        if not fits:
            raise DependencyError(
                f"{folder / names[name, version]}: no file of {name} {version} in the wheelhouse"
                f" runs on the image's Python {target.python} ({target.abi},"
                f" {target.platforms()[0]})",
                hint="add a wheel built for that Python and platform (a pure-Python wheel runs"
                " anywhere)",
            )
        versions.setdefault(name, []).append(version)
    for name, found in versions.items():
        if len(found) > 1:
            raise DependencyError(
                f"{folder}: the wheelhouse holds {name} in versions {', '.join(sorted(found))};"
                " keep one, or pass --requirements to choose"
            )
    return {
        f"{name}=={found[0]}": str(folder / names[name, found[0]])
        for name, found in sorted(versions.items())
    }


def _wheel_tags(wheel: Path) -> frozenset[Tag]:
    return parse_wheel_filename(wheel.name)[3]


def _is_hook(entry: str) -> bool:
    """Whether ``entry`` (a name in the site directory: a file or a folder) is imported as a
    startup hook: ``sitecustomize.py``, ``.pyc``, ``.cpython-311-x86_64-linux-gnu.so``, a
    package..."""
    return entry.partition(".")[0].casefold() in STARTUP_HOOKS


def startup_hooks(wheel: Path) -> list[str]:
    """The members of ``wheel`` that would land in the site directory as a startup hook (also
    under ``__pycache__`` or through the ``.data`` folder), in archive order."""
    try:
        with zipfile.ZipFile(wheel) as archive:
            members = archive.namelist()
    except (OSError, zipfile.BadZipFile) as exc:
        raise DependencyError(f"{wheel}: not a readable wheel ({exc})") from None
    found = []
    for member in members:
        parts = posixpath.normpath(member).split("/")  # pip installs "./x.py" as "x.py"
        if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in _SITE_SCHEMES:
            parts = parts[2:]
        if parts[0] == "__pycache__" and len(parts) > 1:
            parts = parts[1:]
        if _is_hook(parts[0]):
            found.append(member)
    return found


def check_wheels(wheels: list[Path]) -> None:
    """Refuse, naming the wheel and the member, any wheel that ships a startup hook."""
    for wheel in wheels:
        hooks = startup_hooks(wheel)
        if hooks:
            raise DependencyError(
                f"{wheel.name}: member {hooks[0]!r} would run code at the start of every Python"
                " interpreter of the image (a startup hook); the wheel is refused",
                hint="rebuild the wheel without it: the sandbox never runs sitecustomize,"
                " usercustomize or apport_python_hook, and never installs them either",
            )


def install(target: Target, wheels: list[Path], stage: Path) -> list[str]:
    """Install ``wheels`` (already resolved, no dependency is added) into ``stage`` as the image's
    site directory will hold them. Refuses a wheel with a startup hook (`check_wheels`); returns
    the ``.pth`` files left out because they would run code."""
    check_wheels(wheels)
    _pip(
        [
            "install",
            "--isolated",  # pip's configuration (constraints, find-links) has no say here
            "--target",
            str(stage),
            "--no-index",
            "--no-deps",
            "--no-compile",  # the image's own Python compiles them (extend.FINISH)
            "--no-warn-script-location",
            *target.pip_args(),
            *map(str, wheels),
        ],
        origin={},
        fallback="the resolved wheels",
    )
    shutil.rmtree(stage / "bin", ignore_errors=True)  # console scripts for the host's Python
    left_out = []
    for path in sorted(stage.iterdir()):
        inside = path.is_dir() and path.name == "__pycache__"
        hooks = [path, *path.iterdir()] if inside else [path]
        hook = next((hook for hook in hooks if _is_hook(hook.name)), None)
        if hook is not None:  # by a way `startup_hooks` does not know: refused all the same
            raise DependencyError(
                f"the wheels installed {hook.relative_to(stage)!s} into the site directory, a"
                " startup hook that would run in every interpreter of the image; refused"
            )
        if path.suffix == ".pth" and path.is_file() and _runs_code(path):
            left_out.append(path.name)
            path.unlink()
    return left_out


def _runs_code(pth: Path) -> bool:
    # site.py executes a .pth line that starts with "import" followed by a space or a tab.
    lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
    return any(re.match(r"import[ \t]", line) for line in lines)


def _pip(args: list[str], *, origin: dict[str, str], fallback: str) -> None:
    """Run the host's pip; its failure becomes a `DependencyError` naming the line at fault."""
    command = [sys.executable, "-m", "pip", *args, "--disable-pip-version-check", "--no-input"]
    try:
        done = subprocess.run(
            command, capture_output=True, text=True, timeout=_PIP_TIMEOUT_S, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise UnavailableError(f"pip did not run: {exc}") from None
    if done.returncode == 0:
        return
    if "No module named pip" in done.stderr:
        raise UnavailableError(
            f"pip is not installed for {sys.executable}",
            hint="install it (`python -m ensurepip`), or pass pre-built wheels with --wheelhouse",
        )
    # pip's reasons: its errors, and why it discarded a file it found (an sdist whose build
    # backend is missing offline builds as version 0.0.0, for one).
    output = (done.stdout + "\n" + done.stderr).splitlines()
    errors = [line.strip() for line in output if re.match(r"\s*(ERROR:|Discarding )", line)]
    said = " ".join(errors or done.stderr.strip().splitlines()[-3:])[:1200]
    found = re.search(
        r"(?:satisfies the requirement|No matching distribution found for) ([A-Za-z0-9._-]+)", said
    )
    where = origin.get(str(canonicalize_name(found[1])), fallback) if found else fallback
    what = f"{found[1]} cannot be had" if found else "pip failed"
    hint = (
        "check the name and version on the package index; offline (--no-index, or a wheelhouse"
        " alone) every package and each of its dependencies must be in --wheelhouse"
    )
    if "inconsistent version" in said:
        hint = (
            "offline, a source distribution is built with the host's setuptools and no other"
            " build requirement: build it into a wheel first (`pip wheel --no-deps FILE`) and"
            " put the wheel in --wheelhouse"
        )
    raise DependencyError(f"{where}: {what}: {said}", hint=hint)
