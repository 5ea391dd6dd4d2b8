"""A pool's manifest: what a build was made from, and the hashes of what it wrote.

A pool build must be reproducible: the same inputs give byte-identical files on every run and
machine. ``data/manifest.json`` (`PoolManifest`) says which inputs those were (the seed, the
builder's and guardrail's versions, the host Python that parsed and mutated, the sandbox image
that judged, the source files' hash and each pinned sdist's sha256) and the sha256 of every file
the build wrote but its report (``build_report.json`` holds timings and is not compared).
`differences` compares two manifests: a rebuild into a folder that holds one says whether the
bytes are the same, and when they are not, which inputs differ; none differing means the build
itself was not reproducible, which is a bug to report. The manifest has no timestamp, no path
and no timing, so it is itself byte-identical between identical builds.
"""

from __future__ import annotations

import hashlib
import platform
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, Field

import guardrail
from guardrail.sandbox.shipping import RUNNER_VERSION
from guardrail_eval.build import BUILDER_VERSION, REPORT_FILE
from guardrail_eval.outputs import write_text_atomically
from guardrail_eval.poolcontext import CONTEXT_DIR

__all__ = [
    "MANIFEST_FILE",
    "PoolManifest",
    "base_inputs",
    "differences",
    "read_manifest",
    "tree_digest",
    "write_manifest",
]

MANIFEST_FILE = "manifest.json"


class PoolManifest(BaseModel):
    """The inputs of a build (name -> value or sha256) and its outputs (posix path -> sha256)."""

    inputs: dict[str, str]
    outputs: dict[str, str] = Field(default_factory=dict)
    clean: bool = Field(
        default=True, description="no sandbox fault was left: the bytes do not depend on load"
    )

    def render_json(self) -> str:
        return self.model_dump_json(indent=2) + "\n"


def base_inputs(seed: int, image_id: str | None, extra: Mapping[str, str]) -> dict[str, str]:
    """The inputs every build has, with ``extra`` (sources, sdists, settings) added."""
    return {
        "seed": str(seed),
        "builder_version": BUILDER_VERSION,
        "guardrail_version": guardrail.__version__,
        "runner_version": RUNNER_VERSION,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "sandbox_image": image_id or "unknown",
        **extra,
    }


def tree_digest(files: Mapping[str, bytes]) -> str:
    """sha256 over a tree's files (posix path and content), in path order."""
    digest = hashlib.sha256()
    for path in sorted(files):
        digest.update(f"{path}\0{hashlib.sha256(files[path]).hexdigest()}\n".encode())
    return digest.hexdigest()


def write_manifest(out_dir: Path, inputs: Mapping[str, str], *, clean: bool) -> PoolManifest:
    """Hash what the build wrote under ``out_dir`` and write ``out_dir/data/manifest.json``:
    each file of ``data/`` (its report and the manifest aside) and ``context/`` as one digest
    (`tree_digest` of its files); returns the manifest."""
    data = out_dir / "data"
    outputs = {
        f"data/{path.name}": hashlib.sha256(path.read_bytes()).hexdigest()
        for path in sorted(data.iterdir())
        if path.is_file() and path.name not in {MANIFEST_FILE, REPORT_FILE}
    }
    context = out_dir / CONTEXT_DIR
    if context.is_dir():
        files = {
            path.relative_to(context).as_posix(): path.read_bytes()
            for path in context.rglob("*")
            if path.is_file()
        }
        outputs[f"{CONTEXT_DIR}/"] = tree_digest(files)
    manifest = PoolManifest(inputs=dict(sorted(inputs.items())), outputs=outputs, clean=clean)
    write_text_atomically({data / MANIFEST_FILE: manifest.render_json()})
    return manifest


def read_manifest(out_dir: Path) -> PoolManifest | None:
    """The manifest of the pool in ``out_dir``, None when there is none that parses."""
    path = out_dir / "data" / MANIFEST_FILE
    if not path.is_file():
        return None
    try:
        return PoolManifest.model_validate_json(path.read_text(encoding="utf-8"))
    except ValueError:
        return None


def differences(old: PoolManifest, new: PoolManifest) -> tuple[list[str], list[str]]:
    """(inputs that differ, ``name: old -> new``; outputs that differ, by path)."""
    inputs = [
        f"{name}: {old.inputs.get(name, '(none)')} -> {new.inputs.get(name, '(none)')}"
        for name in sorted({*old.inputs, *new.inputs})
        if old.inputs.get(name) != new.inputs.get(name)
    ]
    outputs = [
        path
        for path in sorted({*old.outputs, *new.outputs})
        if old.outputs.get(path) != new.outputs.get(path)
    ]
    return inputs, outputs
