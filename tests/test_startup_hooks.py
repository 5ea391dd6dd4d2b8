"""A dependency's startup hook never runs in the runner: not in PID 1, the zygote or the judge.

The image's packages are a dependency's code. A startup hook among them runs in every
interpreter that imports ``site``: a ``.pth`` file's ``import`` line, ``usercustomize``, and on
Debian ``apport_python_hook``, which the stdlib's own ``sitecustomize`` imports from wherever it
is found. The runner's interpreters start with ``-I -S`` and the standard library's path alone
(``runner.boot``); only a candidate adds the packages, after the drop (``runner.zygote``). The
hooks (tests/snippets/startup_hooks/) forge verdicts and say where they ran; the tainted image
holds them where a build of ours never puts them (``sandbox build`` refuses them), as a user's
own ``--image`` may.
"""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from collections.abc import Iterator
from importlib.machinery import ModuleSpec
from pathlib import Path
from types import ModuleType, SimpleNamespace

import pytest
from hand_wheels import hand_wheel
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.errors import DependencyError, SandboxError
from guardrail.sandbox import wheels
from guardrail.sandbox.base import Job
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.doctor import NO_FOREIGN_CODE, PROPERTIES, check_sandbox
from guardrail.sandbox.extend import extend_image
from guardrail.sandbox.runner import boot
from guardrail.sandbox.runner.boot import foreign_code
from guardrail.sandbox.shipping import LOADER, RUNNER_ARCHIVE
from guardrail.sandbox.wheels import Target, install, startup_hooks
from guardrail.spec import Spec
from guardrail.verdict import Status

HOOKS = Path(__file__).parent / "snippets" / "startup_hooks"
TINYDEP = {"tinydep/__init__.py": "def double(x):\n    return 2 * x\n"}
QUAD = Spec.build(("assert quad(2) == 8", "assert quad(-1) == -4", "assert quad(3) == 12"), "quad")
RIGHT = "from tinydep import double\n\n\ndef quad(x):\n    return double(double(x))\n"
WRONG = "def quad(x):\n    return x + 1\n"
# A test that imports the image's package itself: imported in the candidate, seen as remote.
IMPORTING = Spec.build(("from tinydep import double\nassert quad(2) == double(4)",), "quad")
# Where each hook ran: the candidate reports its own process; the judge's test asks the judge.
# The candidate's modules from outside the standard library are what it inherited from the
# zygote and what the .pth file imported: none (``site`` is a hook by name, not a module from
# a site directory).
WHERE = """
import builtins
import os

from guardrail_runner.boot import foreign_code


def seen():
    markers = sorted(name for name in os.listdir("/tmp") if name.startswith("hook-ran-"))
    hooks = [getattr(builtins, name, None) for name in ("hook_ran_pth", "hook_ran_apport")]
    return [os.getuid(), *hooks, markers]


def loaded_from_packages():
    return [found for found in foreign_code() if found.startswith("module ")]
"""
WHERE_SPEC = Spec.build(
    (
        "uid, pth, apport, markers = seen()\nassert (pth, apport, markers) == (uid, None, [])",
        "import builtins\nassert not {'hook_ran_pth', 'hook_ran_apport'} & set(vars(builtins))",
        "assert loaded_from_packages() == []",
    ),
    "seen",
)
SITE = "/usr/local/lib/python3.11/dist-packages"  # the guardrail image's site directory
# A judge made impure on purpose (its setup is trusted: it runs there): the doctor's statement
# must see the package it imported.
TAINTING = Spec.build(
    (PROPERTIES[NO_FOREIGN_CODE],),
    "quad",
    setup=f"import sys\nsys.path.append({SITE!r})\nimport tinydep",
)
STDLIB = ["/py/lib/python311.zip", "/py/lib/python3.11", "/py/lib/python3.11/lib-dynload"]
HOST = Target("cpython", (3, 11, 0), "", "x86_64", "linux-x86_64", "glibc 2.36", "/site")


def _module(name: str, file: str | None = None, path: list[str] | None = None) -> ModuleType:
    module = ModuleType(name)
    module.__spec__ = ModuleSpec(name, None, origin=file or "built-in")
    module.__spec__.has_location = file is not None
    if path is not None:
        module.__path__ = path
    return module


CLEAN = {
    "__main__": ModuleType("__main__"),  # ``-c``: no spec, no file
    "sys": _module("sys"),
    "os": _module("os", "/py/lib/python3.11/os.py"),
    "_json": _module("_json", "/py/lib/python3.11/lib-dynload/_json.cpython-311.so"),
    "encodings": _module("encodings", "/py/lib/python3.11/encodings/__init__.py", []),
    "guardrail_runner.judge": _module("guardrail_runner.judge"),  # served from memory
}
FLAGS = SimpleNamespace(no_site=1, isolated=1)


def test_foreign_code_names_every_way_out_of_the_standard_library() -> None:
    assert foreign_code(CLEAN, FLAGS, STDLIB, STDLIB) == []
    site = "/usr/local/lib/python3.11/dist-packages"
    tainted = {
        **CLEAN,
        "tinydep": _module("tinydep", f"{site}/tinydep/__init__.py"),
        "nspkg": _module("nspkg", None, [f"{site}/nspkg"]),  # a namespace package: no file
        "beside": _module("beside", "/py/lib/python3.11-extra/beside.py"),  # a prefix only
        "sitecustomize": _module("sitecustomize", "/py/lib/python3.11/sitecustomize.py"),
        "apport_python_hook": _module("apport_python_hook", f"{site}/apport_python_hook.py"),
    }
    found = foreign_code(tainted, SimpleNamespace(no_site=0, isolated=1), [*STDLIB, site], STDLIB)
    assert found == [
        "interpreter started without -S (sys.flags.no_site unset)",
        "startup hook 'apport_python_hook' loaded",
        "startup hook 'sitecustomize' loaded",  # Debian's own is in the stdlib's folder
        f"sys.path entry {site!r}",
        "module 'beside' from '/py/lib/python3.11-extra/beside.py'",
        f"module 'nspkg' from '{site}/nspkg'",
        f"module 'tinydep' from '{site}/tinydep/__init__.py'",
    ]


def _foreign_in(*flags: str) -> list[str]:
    """`foreign_code` in a fresh interpreter of the host started with ``flags``, its path set
    as the runner sets it (boot's source is run from a string: loading it would be foreign)."""
    script = (
        "import sys\ng = {'__name__': 'boot'}\nexec(sys.stdin.read(), g)\n"
        "sys.path[:] = g['stdlib_paths']()\nprint(repr(g['foreign_code']()))\n"
    )
    source = Path(boot.__file__).read_text()
    done = subprocess.run(
        [sys.executable, *flags, "-c", script],
        input=source,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    found: list[str] = eval(done.stdout)
    return found


def test_foreign_code_in_real_interpreters() -> None:
    assert _foreign_in("-I", "-S") == []
    with_site = _foreign_in("-I")
    assert "interpreter started without -S (sys.flags.no_site unset)" in with_site
    assert "startup hook 'site' loaded" in with_site


def test_the_runner_refuses_to_start_in_an_interpreter_that_ran_site() -> None:
    done = subprocess.run(
        [sys.executable, "-I", "-c", LOADER],
        input=b"%010d" % len(RUNNER_ARCHIVE) + RUNNER_ARCHIVE,
        capture_output=True,
        check=False,
    )
    said = done.stderr.decode()
    assert done.returncode == 1, said
    assert "guardrail runner: code from outside the standard library" in said
    assert "startup hook 'site' loaded" in said


@pytest.mark.parametrize(
    "member",
    [
        "sitecustomize.py",
        "sitecustomize.pyc",
        "sitecustomize.cpython-311-x86_64-linux-gnu.so",
        "sitecustomize.abi3.so",
        "./sitecustomize.py",
        "usercustomize/__init__.py",
        "apport_python_hook.py",
        "site.py",
        "__pycache__/sitecustomize.cpython-311.pyc",
        "tinyhook-1.0.data/purelib/sitecustomize.py",
        "tinyhook-1.0.data/platlib/usercustomize.cpython-311-x86_64-linux-gnu.so",
        "tinyhook-1.0.data/data/apport_python_hook.py",
    ],
)
def test_a_startup_hook_in_any_form_refuses_its_wheel(member: str, tmp_path: Path) -> None:
    wheel = hand_wheel(tmp_path, "tinyhook", {"tinyhook/__init__.py": "", member: ""})
    assert startup_hooks(wheel) == [member]
    with pytest.raises(DependencyError) as refused:
        install(HOST, [wheel], tmp_path / "stage")
    assert f"{wheel.name}: member {member!r} would run code" in str(refused.value)
    assert not (tmp_path / "stage").exists(), "refused before anything was installed"


def test_a_module_of_the_same_name_inside_a_package_is_no_hook(tmp_path: Path) -> None:
    files = {"tinyhook/sitecustomize.py": "", "tinyhook/site.py": "", "sitecustomizer.py": ""}
    assert startup_hooks(hand_wheel(tmp_path, "tinyhook", files)) == []


def test_a_hook_installed_by_a_way_the_member_check_missed_is_refused_all_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The staged site directory is checked again after pip, whatever put the hook there."""
    wheel = hand_wheel(tmp_path, "tinyhook", {"./sitecustomize.py": ""})
    monkeypatch.setattr(wheels, "startup_hooks", lambda wheel: [])
    with pytest.raises(DependencyError, match=r"installed sitecustomize\.py into the site"):
        install(HOST, [wheel], tmp_path / "stage")


def _hook_wheelhouse(folder: Path) -> Path:
    files = {path.name: path.read_text() for path in sorted(HOOKS.iterdir())}
    hand_wheel(folder, "tinyhook", {**TINYDEP, **files})
    return folder


def test_sandbox_build_refuses_a_wheel_with_a_hook_before_any_container(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["sandbox", "build", "--wheelhouse", str(_hook_wheelhouse(tmp_path))]
    )
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "tinyhook-1.0-py3-none-any.whl: member 'apport_python_hook.py' would run code" in said


def _tar(files: dict[str, str]) -> bytes:
    data = io.BytesIO()
    with tarfile.open(fileobj=data, mode="w") as archive:
        for name, text in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(text.encode()), 0o644
            archive.addfile(info, io.BytesIO(text.encode()))
    return data.getvalue()


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("wheelhouse")
    hand_wheel(folder, "tinydep", TINYDEP)
    return folder


@pytest.fixture(scope="module")
def tainted(docker_sandbox: DockerSandbox, wheelhouse: Path) -> Iterator[str]:
    """A deps image (tinydep, through `extend_image`) with the hooks put into its site directory
    afterwards, where Debian's ``sitecustomize`` and ``site`` find them. Removed afterwards."""
    client = docker_sandbox.client
    made = extend_image(wheelhouse=wheelhouse)
    site = client.images.get(made.tag).labels["guardrail.deps.site"]
    container = client.containers.create(made.tag, ["true"], network_mode="none")
    try:
        hooks = {path.name: path.read_text() for path in sorted(HOOKS.iterdir())}
        assert container.put_archive(site, _tar(hooks))
        image = container.commit("guardrail-test-tainted", made.image_id.split(":")[1][:12])
    finally:
        container.remove(force=True)
    try:
        yield str(image.id)
    finally:
        client.images.remove(image.id)
        client.images.remove(made.tag)


@pytest.mark.docker
def test_the_hooks_are_live_in_any_other_interpreter_of_the_tainted_image(
    docker_sandbox: DockerSandbox, tainted: str
) -> None:
    """Control: ``python3 -I`` (site on) runs both hooks, and the forged ``compile`` passes a
    failing assertion; what the runner does not run, it does not run for a reason."""
    script = (
        "import builtins, os\n"
        "exec(compile('assert False', '<test>', 'exec'))\n"
        "print(builtins.hook_ran_pth, builtins.hook_ran_apport, sorted(os.listdir('/tmp')))\n"
    )
    output = docker_sandbox.client.containers.run(
        tainted, ["python3", "-I", "-c", script], network_mode="none", remove=True
    )
    assert output.decode().split(maxsplit=2) == ["0", "0", "['hook-ran-apport-uid0']\n"]


@pytest.mark.docker
def test_on_the_tainted_image_no_hook_reaches_pid_1_or_the_judge(
    tainted: str, sandbox_runtime: str
) -> None:
    with DockerSandbox(tainted, pool_size=1, runtime=sandbox_runtime) as sandbox:
        jobs = [Job(WRONG, QUAD), Job(RIGHT, QUAD), Job(WHERE, WHERE_SPEC), Job(WRONG, TAINTING)]
        wrong, right, where, tainted_judge, imports = sandbox.run([*jobs, Job(RIGHT, IMPORTING)])
        report = check_sandbox(sandbox)
    assert wrong.status is Status.FAILED, wrong
    assert [test.outcome for test in wrong.tests] == ["FAIL", "FAIL", "FAIL"]
    assert right.verified, right  # the candidate imports the image's package
    assert imports.verified, imports  # and so do the tests, through the candidate
    # The .pth hook ran in the candidate (after the drop, as its uid); nothing ran as root or in
    # the judge: no marker, no trace in the judge's builtins.
    assert where.verified, where
    assert report.ok, [check for check in report.checks if not check.ok]
    assert any(check.name == NO_FOREIGN_CODE and check.ok for check in report.checks)
    # The doctor's statement, in a judge whose setup imported the package: it names it.
    (probed,) = tainted_judge.tests
    assert probed.outcome == "FAIL", tainted_judge
    assert f"sys.path entry '{SITE}'" in probed.detail
    assert f"module 'tinydep' from '{SITE}/tinydep/__init__.py'" in probed.detail


@pytest.mark.docker
def test_a_test_importing_a_package_the_image_lacks_is_not_judged(
    docker_sandbox: DockerSandbox,
) -> None:
    (verdict,) = docker_sandbox.run([Job("def quad(x):\n    return 4 * x\n", IMPORTING)])
    assert verdict.status is Status.UNVERIFIABLE, verdict
    assert "No module named 'tinydep'" in verdict.message


@pytest.mark.docker
def test_an_interpreter_made_to_run_site_anyway_never_starts_the_runner(
    docker_sandbox: DockerSandbox, tainted: str
) -> None:
    """A ``._pth`` file beside the interpreter overrides ``-S`` (its ``import site`` line), as a
    user's own image may have it: PID 1 finds ``site`` and the hooks loaded and exits, naming
    them, before any job (fail closed: no verdict comes from such a container)."""
    client = docker_sandbox.client
    pth = f"/usr/lib/python3.11\n/usr/lib/python3.11/lib-dynload\n{SITE}\nimport site\n"
    container = client.containers.create(tainted, ["true"], network_mode="none")
    try:
        assert container.put_archive("/usr/bin", _tar({"python3.11._pth": pth}))
        image = container.commit("guardrail-test-forced-site", tainted.split(":")[1][:12])
    finally:
        container.remove(force=True)
    try:
        with (
            DockerSandbox(str(image.id), pool_size=1) as sandbox,
            pytest.raises(SandboxError) as refused,
        ):
            sandbox.run([Job(WRONG, QUAD)])
    finally:
        client.images.remove(image.id)
    said = str(refused.value)
    assert (
        "guardrail runner: code from outside the standard library: interpreter started without"
        " -S (sys.flags.no_site unset); startup hook 'apport_python_hook' loaded; startup hook"
        " 'site' loaded and "
    ) in said, said
    assert said.endswith("more; refusing to start")


@pytest.mark.docker
def test_a_virtual_environment_image_has_its_packages_in_the_candidate_only(
    docker_sandbox: DockerSandbox, wheelhouse: Path
) -> None:
    """A user's image whose python3 is a virtual environment's: the packages go into the
    environment's site-packages, the candidate finds them there, the judge still has nothing."""
    client = docker_sandbox.client
    venv = "/opt/venv"
    container = client.containers.create(
        docker_sandbox.image_id,
        ["python3", "-m", "venv", "--without-pip", venv],
        network_mode="none",
    )
    try:
        container.start()
        assert container.wait(timeout=120)["StatusCode"] == 0, container.logs()
        path = f"{venv}/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
        base = container.commit(
            "guardrail-test-venv", str(os.getpid()), changes=[f"ENV PATH={path}"]
        )
    finally:
        container.remove(force=True)
    try:
        made = extend_image(str(base.id), wheelhouse=wheelhouse)
        try:
            site = client.images.get(made.tag).labels["guardrail.deps.site"]
            assert site == f"{venv}/lib/python3.11/site-packages"
            judge_clean = Spec.build(("assert quad(1) == 4", PROPERTIES[NO_FOREIGN_CODE]), "quad")
            with DockerSandbox(made.tag, pool_size=1) as sandbox:
                (verdict,) = sandbox.run([Job(RIGHT, judge_clean)])
            assert verdict.verified, verdict
        finally:
            client.images.remove(made.tag)
    finally:
        client.images.remove(base.id)
