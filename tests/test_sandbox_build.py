"""``guardrail sandbox build --requirements/--wheelhouse``: extending the sandbox image offline.

Every package here is written by the test and built with ``pip wheel`` from a local folder (or
zipped by hand when it must carry something pip would not build); nothing is downloaded. Images
the tests create are removed by them, and only those.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hand_wheels import hand_wheel
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.errors import DependencyError
from guardrail.sandbox.base import Job
from guardrail.sandbox.container import _verdict_from_report
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.extend import BASE_LABEL, DEPS_REPOSITORY, HASH_LABEL, extend_image
from guardrail.sandbox.wheels import Target, install, resolve
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

runner = CliRunner()

CANDIDATE = "from tinydep import double\n\n\ndef quad(x):\n    return double(double(x))\n"
QUAD = Spec.build(("assert quad(2) == 8", "assert quad(-1) == -4"), "quad")
# The host's interpreter and one a minor version later: the same wheels must be chosen for an
# image whose Python differs from the host's, without building anything on the host.
HOST = Target(
    implementation="cpython",
    version=(sys.version_info[0], sys.version_info[1], 0),
    abiflags=sys.abiflags,
    machine="x86_64",
    platform="linux-x86_64",
    libc="glibc 2.36",
    site="/usr/local/lib/python3/dist-packages",
)
LATER = Target(**{**HOST.__dict__, "version": (HOST.version[0], HOST.version[1] + 1, 0)})


def _package(root: Path, name: str, body: str, *, depends: str = "") -> Path:
    """A one-module setuptools project in ``root / name``."""
    folder = root / name
    (folder / name).mkdir(parents=True)
    dependencies = f'dependencies = ["{depends}"]\n' if depends else ""
    (folder / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        f'[project]\nname = "{name}"\nversion = "1.0"\n{dependencies}'
    )
    (folder / name / "__init__.py").write_text(body)
    return folder


def _pip_wheel(project: Path, wheelhouse: Path) -> Path:
    subprocess.run(
        [
            *(sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-index"),
            *("--no-build-isolation", "--quiet", "--wheel-dir", str(wheelhouse), str(project)),
        ],
        check=True,
    )
    return next(wheelhouse.glob(f"{project.name}-*.whl"))


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("projects")
    _package(root, "tinydep", "def double(x):\n    return 2 * x\n")
    _package(root, "tinyapp", "from tinydep import double\n", depends="tinydep")
    return root


@pytest.fixture(scope="module")
def wheelhouse(projects: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheelhouse")
    _pip_wheel(projects / "tinydep", folder)
    return folder


def _deps_images(client: Any) -> set[str]:
    return {tag for image in client.images.list(DEPS_REPOSITORY) for tag in image.tags}


@pytest.fixture(scope="module")
def extended(docker_sandbox: DockerSandbox, wheelhouse: Path) -> Iterator[str]:
    """The sandbox image extended with tinydep, through the CLI; removed afterwards."""
    before = _deps_images(docker_sandbox.client)
    result = runner.invoke(app, ["sandbox", "build", "--wheelhouse", str(wheelhouse)])
    assert result.exit_code == 0, result.output
    # The tag is the one the command names: another run on a shared engine may build its own
    # deps image meanwhile, so the list of images that appeared is not this build's alone.
    built = re.search(rf"built ({re.escape(DEPS_REPOSITORY)}:[0-9a-f]+)", result.stdout)
    assert built is not None, result.output
    tag = built.group(1)
    assert tag in _deps_images(docker_sandbox.client) - before, (tag, result.output)
    assert f"--image {tag}" in result.stdout
    assert f"GUARDRAIL_IMAGE={tag}" in result.stdout
    assert "tinydep==1.0" in result.stdout
    yield tag
    docker_sandbox.client.images.remove(tag)


@pytest.mark.docker
def test_code_importing_the_package_verifies_on_the_extended_image_only(
    docker_sandbox: DockerSandbox, extended: str
) -> None:
    (on_base,) = docker_sandbox.run([Job(CANDIDATE, QUAD)])
    assert not on_base.verified
    assert on_base.reason in {Reason.LOAD_ERROR, Reason.MISSING_DEPENDENCY}
    assert "tinydep" in on_base.message
    with DockerSandbox(extended, pool_size=1) as sandbox:
        (on_extended,) = sandbox.run([Job(CANDIDATE, QUAD)])
        assert on_extended.verified, on_extended
        # Verdicts are cached per image id: the two images never share a cached verdict.
        assert sandbox.identity != docker_sandbox.identity


@pytest.mark.docker
def test_the_same_inputs_reuse_the_image(
    docker_sandbox: DockerSandbox, extended: str, wheelhouse: Path
) -> None:
    image = docker_sandbox.client.images.get(extended)
    result = runner.invoke(app, ["sandbox", "build", "--wheelhouse", str(wheelhouse)])
    assert result.exit_code == 0, result.output
    assert f"reused {extended}" in result.stdout
    again = extend_image(wheelhouse=wheelhouse)
    assert again.reused
    assert (again.tag, again.image_id) == (extended, image.id)
    labels = image.attrs["Config"]["Labels"]
    assert labels[BASE_LABEL] == docker_sandbox.image_id
    assert len(labels[HASH_LABEL]) == 64
    # The build container's command is not left as the image's.
    assert image.attrs["Config"]["Cmd"] == ["python3"]


@pytest.mark.docker
def test_force_rebuilds_under_the_same_tag_and_drops_the_old_image(
    docker_sandbox: DockerSandbox, extended: str, wheelhouse: Path
) -> None:
    old = docker_sandbox.client.images.get(extended).id
    rebuilt = extend_image(wheelhouse=wheelhouse, force=True)
    assert (rebuilt.tag, rebuilt.reused) == (extended, False)
    assert rebuilt.image_id != old
    assert old not in {image.id for image in docker_sandbox.client.images.list(all=True)}


@pytest.mark.docker
def test_verify_judges_on_the_image_of_the_option_or_the_variable(
    extended: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "cache"))
    code, tests = tmp_path / "quad.py", tmp_path / "tests.py"
    code.write_text(CANDIDATE)
    tests.write_text("assert quad(2) == 8\n")
    args = ["verify", str(code), "--tests", str(tests), "--json"]

    def status(*extra: str) -> tuple[int, str]:
        result = runner.invoke(app, [*args, *extra])
        return result.exit_code, json.loads(result.stdout)[0]["status"]

    monkeypatch.delenv("GUARDRAIL_IMAGE", raising=False)
    exit_code, on_base = status()
    assert (exit_code, on_base != "verified") == (1, True)  # missing_dependency or load_error
    assert status("--image", extended) == (0, "verified")
    monkeypatch.setenv("GUARDRAIL_IMAGE", extended)
    assert status() == (0, "verified")


@pytest.mark.docker
def test_the_extended_image_keeps_the_sandbox_hardening(
    extended: str, sandbox_runtime: str
) -> None:
    from guardrail.sandbox.doctor import check_sandbox

    with DockerSandbox(extended, pool_size=1, runtime=sandbox_runtime) as sandbox:
        report = check_sandbox(sandbox)
    assert report.ok, [check for check in report.checks if not check.ok]


@pytest.mark.docker
def test_installed_files_belong_to_root_and_are_read_only(
    docker_sandbox: DockerSandbox, extended: str
) -> None:
    client = docker_sandbox.client
    container = client.containers.create(extended, ["true"], network_mode="none")
    try:
        site = docker_sandbox.client.images.get(extended).labels["guardrail.deps.site"]
        stream, _ = container.get_archive(f"{site}/tinydep")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as archive:
            members = archive.getmembers()
    finally:
        container.remove(force=True)
    assert any(m.name.endswith("__init__.py") for m in members)
    assert any(m.name.endswith(".pyc") for m in members), "compiled by the image's Python"
    for member in members:
        assert (member.uid, member.gid) == (0, 0), member.name
        assert member.mode & 0o7022 == 0, (member.name, oct(member.mode))


def _fails(args: list[str], client: Any, code: int = 2) -> str:
    before = _deps_images(client)
    result = runner.invoke(app, ["sandbox", "build", *args])
    assert result.exit_code == code, result.output
    assert _deps_images(client) == before, "a failed build left an image tag behind"
    return " ".join(result.output.split())


@pytest.mark.docker
def test_bad_requirements_name_the_file_and_line(
    docker_sandbox: DockerSandbox, tmp_path: Path, wheelhouse: Path
) -> None:
    client = docker_sandbox.client
    missing = tmp_path / "absent.txt"
    assert f"{missing}: no such requirements file" in _fails(["-r", str(missing)], client)
    bad = tmp_path / "bad.txt"
    bad.write_text("# pinned\ntinydep==1.0\nnot a requirement!!\n")
    assert f"{bad}:3: not a requirement" in _fails(["-r", str(bad)], client)
    option = tmp_path / "option.txt"
    option.write_text("-e ./somewhere\n")
    assert f"{option}:1: pip options are not supported" in _fails(["-r", str(option)], client)
    absent = tmp_path / "absent-version.txt"
    absent.write_text("tinydep==1.0\n\ntinydep-extra-absent==9.9\n")
    said = _fails(["-r", str(absent), "--wheelhouse", str(wheelhouse), "--no-index"], client)
    assert f"{absent}:3: tinydep-extra-absent cannot be had" in said


@pytest.mark.docker
def test_a_tag_of_an_image_guardrail_did_not_build_is_never_moved(
    docker_sandbox: DockerSandbox, wheelhouse: Path
) -> None:
    client = docker_sandbox.client
    foreign = "guardrail-test-foreign:kept"  # another name of the base image, so never the base's
    client.images.get(docker_sandbox.image_id).tag(foreign)
    try:
        said = _fails(["--wheelhouse", str(wheelhouse), "--tag", foreign], client)
        assert f"--tag {foreign!r} names an image guardrail did not build" in said
        assert client.images.get(foreign).id == docker_sandbox.image_id
    finally:
        client.images.remove(foreign)  # only the name: the base image has its own


@pytest.mark.docker
def test_a_dependency_missing_offline_is_named(
    docker_sandbox: DockerSandbox, projects: Path, tmp_path: Path
) -> None:
    _pip_wheel(projects / "tinyapp", tmp_path)
    said = _fails(["--wheelhouse", str(tmp_path)], docker_sandbox.client)
    assert f"{tmp_path} (a dependency of its wheels): tinydep cannot be had" in said


@pytest.mark.docker
def test_a_compiled_wheel_for_another_platform_is_refused(
    docker_sandbox: DockerSandbox, tmp_path: Path
) -> None:
    wheel = hand_wheel(tmp_path, "tinywin", {"tinywin.py": ""}, tag="cp311-cp311-win_amd64")
    said = _fails(["--wheelhouse", str(tmp_path)], docker_sandbox.client)
    assert f"{wheel}: no file of tinywin 1.0" in said
    assert "runs on the image's Python 3.11" in said


@pytest.mark.docker
def test_an_image_without_python_is_refused(
    docker_sandbox: DockerSandbox, wheelhouse: Path
) -> None:
    client = docker_sandbox.client
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        info = tarfile.TarInfo("etc/hostname")
        archive.addfile(info, io.BytesIO(b""))
    client.api.import_image_from_data(data.getvalue(), repository="guardrail-test-nopython")
    try:
        said = _fails(
            ["--wheelhouse", str(wheelhouse), "--image", "guardrail-test-nopython"], client, code=3
        )
        assert "has no python3" in said
    finally:
        client.images.remove("guardrail-test-nopython")


@pytest.mark.docker
def test_an_image_entrypoint_does_not_run_before_the_runner(docker_sandbox: DockerSandbox) -> None:
    client = docker_sandbox.client
    container = client.containers.create(docker_sandbox.image_id, ["true"], network_mode="none")
    try:
        image = container.commit("guardrail-test-entrypoint", changes=['ENTRYPOINT ["/bin/false"]'])
    finally:
        container.remove(force=True)
    try:
        with DockerSandbox("guardrail-test-entrypoint", pool_size=1) as sandbox:
            (verdict,) = sandbox.run([Job("def quad(x):\n    return 4 * x\n", QUAD)])
        assert verdict.verified, verdict
    finally:
        client.images.remove(image.id)


def _other_python() -> Path | None:
    """A CPython installation on the host of another minor version than the image's 3.11."""
    found = sorted(Path("/root/.pyenv/versions").glob("3.1[2-9].*"))
    return found[0] if found else None


def _image_with_python(client: Any, base: str, prefix: Path, tag: str) -> str:
    """``base`` with the host's Python at ``prefix`` (same path, readable by all) as python3."""
    minor = f"python{prefix.name.rsplit('.', 1)[0]}"
    skipped = ("test", "idlelib", "tkinter", "ensurepip", "lib2to3")

    def keep(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
        inside = info.name.split(f"lib/{minor}/", 1)
        if len(inside) == 2 and inside[1].split("/")[0] in skipped:
            return None
        if len(inside) == 2 and inside[1].startswith("site-packages/"):
            return None  # the host's own packages (and .pth files) stay on the host
        info.uid = info.gid = 0
        info.mode |= 0o755 if info.isdir() else 0o444
        return info

    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        parents = prefix.relative_to("/").parents
        for parent in reversed([p for p in parents if str(p) != "."]):
            folder = tarfile.TarInfo(str(parent))
            folder.type, folder.mode = tarfile.DIRTYPE, 0o755
            archive.addfile(folder)
        archive.add(str(prefix), arcname=str(prefix.relative_to("/")), filter=keep)
        link = tarfile.TarInfo("usr/local/bin/python3")  # first on the image's PATH
        link.type, link.linkname = tarfile.SYMTYPE, str(prefix / "bin" / minor)
        archive.addfile(link)
    container = client.containers.create(base, ["python3"], network_mode="none")
    try:
        container.put_archive("/", data.getvalue())
        return str(container.commit(*tag.split(":")).id)
    finally:
        container.remove(force=True)


@pytest.mark.docker
def test_an_image_of_another_python_gets_wheels_for_its_version(
    docker_sandbox: DockerSandbox, wheelhouse: Path
) -> None:
    prefix = _other_python()
    if prefix is None:
        message = "no CPython of another minor version than the image's on this host"
        if os.environ.get("CI"):  # the CI machine has one (pyenv): its absence is a failure
            pytest.fail(message, pytrace=False)
        pytest.skip(f"{message} (skipped because CI is unset: developer laptop only)")
    client = docker_sandbox.client
    base = _image_with_python(
        client, docker_sandbox.image_id, prefix, "guardrail-test-python:other"
    )
    try:
        made = extend_image(base, wheelhouse=wheelhouse)
        try:
            assert made.python == prefix.name
            with DockerSandbox(made.tag, pool_size=1) as sandbox:
                (verdict,) = sandbox.run([Job(CANDIDATE, QUAD)])
            assert verdict.verified, verdict
        finally:
            client.images.remove(made.tag)
    finally:
        client.images.remove(base)


def test_a_missing_dependency_verdict_says_how_to_add_it() -> None:
    verdict = _verdict_from_report(
        {
            "status": "unverifiable",
            "reason": "missing_dependency",
            "message": "ModuleNotFoundError: No module named 'attrs.converters'",
        }
    )
    assert verdict.status is Status.UNVERIFIABLE
    assert verdict.message.startswith("ModuleNotFoundError: No module named 'attrs.converters'")
    assert "module 'attrs'" in verdict.message
    assert "guardrail sandbox build --requirements" in verdict.message
    quoted = _verdict_from_report(
        {"status": "unverifiable", "reason": "missing_dependency", "message": "module 'six'"}
    )
    assert "provides module 'six'" in quoted.message
    other = _verdict_from_report({"status": "error", "reason": "load_error", "message": "x"})
    assert other.message == "x"


def test_an_image_of_another_python_gets_wheels_without_a_host_build(
    wheelhouse: Path, tmp_path: Path
) -> None:
    assert HOST.matches_host()
    assert not LATER.matches_host()
    wheels = resolve(LATER, tmp_path, requirements=None, wheelhouse=wheelhouse, no_index=True)
    assert [wheel.name for wheel in wheels] == ["tinydep-1.0-py3-none-any.whl"]
    compiled = tmp_path / "compiled"
    compiled.mkdir()
    abi = HOST.abi
    hand_wheel(compiled, "tinyext", {"tinyext.py": ""}, tag=f"{abi}-{abi}-manylinux_2_17_x86_64")
    assert resolve(HOST, tmp_path / "a", requirements=None, wheelhouse=compiled, no_index=True)
    with pytest.raises(DependencyError, match=r"no file of tinyext 1\.0 .* runs on the image's"):
        resolve(LATER, tmp_path / "b", requirements=None, wheelhouse=compiled, no_index=True)


def test_pth_files_that_run_code_are_left_out(tmp_path: Path) -> None:
    wheel = hand_wheel(
        tmp_path,
        "tinyhook",
        {
            "tinyhook.py": "",
            "tinyhook-paths.pth": "/opt/somewhere\n",
            "tinyhook-run.pth": "import os; os.system('id')\n",
        },
    )
    stage = tmp_path / "stage"
    left_out = install(HOST, [wheel], stage)
    assert left_out == ["tinyhook-run.pth"]
    assert sorted(p.name for p in stage.iterdir() if not p.name.endswith(".dist-info")) == [
        "tinyhook-paths.pth",
        "tinyhook.py",
    ]
