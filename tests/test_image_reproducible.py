"""The sandbox image is reproducible, and `guardrail sandbox export|import` copies it by id.

Every node of a Ray cluster must run the same image id (it is in the verdict identity), so the
same recipe must give the same id on any engine. The pack step is checked on small trees that
differ only in what must not matter (mtimes past SOURCE_DATE_EPOCH, creation order); the whole
recipe is rebuilt on a private second engine (debootstrap from the mirror, about a minute) and
must give the id of the shared engine's image. Images the tests create are removed by them.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from typer.testing import CliRunner

from guardrail.cli.app import app
from guardrail.errors import InputError
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.image import archive_image_ids, recipe_path

if TYPE_CHECKING:  # conftest is not importable by name at run time (several exist)
    from conftest import SecondEngine

pytestmark = pytest.mark.docker
runner = CliRunner()


def _recipe(*args: str, docker_host: str | None = None) -> tuple[str, str]:
    """Run the recipe; its (tag, id) lines."""
    env = dict(os.environ)
    if docker_host:
        env["DOCKER_HOST"] = docker_host
    done = subprocess.run(
        ["bash", str(recipe_path()), *args], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr[-3000:]
    tag, image_id = done.stdout.split()
    return tag, image_id


def _tree(root: Path, names: list[str], *, stamp: float | None, extra: str = "") -> Path:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"{name}{extra}\n")
        if stamp is not None:
            os.utime(path, (stamp, stamp))
    old = root / "old"
    old.write_text("from a package, older than the epoch\n")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    return root


def _engine_id(tag: str) -> str:
    done = subprocess.run(
        ["docker", "image", "inspect", "--format", "{{.Id}}", tag],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def test_packing_ignores_mtimes_and_order_and_sees_content(
    docker_sandbox: object, tmp_path: Path
) -> None:
    names = ["bin/tool", "lib/a.py", "lib/b.py", "etc/conf"]
    now = _tree(tmp_path / "now", names, stamp=None)
    later = _tree(tmp_path / "later", list(reversed(names)), stamp=time.time() + 86_400)
    changed = _tree(tmp_path / "changed", names, stamp=None, extra="!")
    tags = [f"guardrail-test-pack:{uuid.uuid4().hex[:12]}" for _ in range(3)]
    try:
        ids = [
            _recipe("--pack", str(tree), tag)[1]
            for tree, tag in zip((now, later, changed), tags, strict=True)
        ]
        assert ids[0] == ids[1], "the same content packed twice gave two image ids"
        assert ids[2] != ids[0], "a changed file did not change the image id"
        assert [_engine_id(tag) for tag in tags] == ids  # what the engine says, not the recipe
    finally:
        subprocess.run(["docker", "rmi", *tags], capture_output=True, check=False)


def test_export_import_copies_the_id(second_engine: SecondEngine, tmp_path: Path) -> None:
    archive = tmp_path / "image.tar"
    exported = runner.invoke(
        app, ["sandbox", "export", "--image", second_engine.image, "-o", str(archive)]
    )
    assert exported.exit_code == 0, exported.output
    (image_id,) = archive_image_ids(archive)
    assert image_id in exported.output
    imported = runner.invoke(
        app, ["sandbox", "import", str(archive)], env={"DOCKER_HOST": second_engine.url}
    )
    assert imported.exit_code == 0, imported.output
    assert f"imported {image_id}" in imported.output
    client = second_engine.client()
    try:
        assert client.images.get(second_engine.image).id == image_id
    finally:
        client.close()


def test_import_refuses_what_is_not_an_image_archive(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.tar"
    bogus.write_bytes(b"not a tar")
    with pytest.raises(InputError, match="not an image archive"):
        archive_image_ids(bogus)
    result = runner.invoke(app, ["sandbox", "import", str(bogus)])
    assert result.exit_code == 2, result.output


def test_the_recipe_rebuilt_on_another_engine_gives_the_same_id(
    docker_sandbox: object, second_engine: SecondEngine
) -> None:
    assert isinstance(docker_sandbox, DockerSandbox)
    tag = f"guardrail-test-rebuild:{uuid.uuid4().hex[:12]}"
    _, rebuilt = _recipe(tag, docker_host=second_engine.url)
    assert rebuilt == docker_sandbox.image_id, (
        f"rebuilding {docker_sandbox.image} gave {rebuilt}, not {docker_sandbox.image_id}: the"
        " build is not reproducible (or the mirror moved since the shared image was built)"
    )
    client = second_engine.client()
    try:
        assert client.images.get(tag).id == rebuilt
    finally:
        client.close()
