"""Every code block of the README and of docs/ runs as written, against the real engine.

A page's blocks run in order, in one fresh folder per page, as a reader pasting them would:
``python`` blocks with this virtualenv's interpreter, ``bash`` blocks with ``bash -euo pipefail``
and this virtualenv's ``bin`` first on ``PATH``. ``text`` blocks show output and are not run. A
``python`` or ``bash`` block that cannot run here (it takes an hour, or needs the reader's own
cluster) says so on the line before it, ``<!-- illustration: NAME -->``, and its name must be in
``ILLUSTRATIONS`` below, so that no block stops running without a change to this file.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").glob("*.md")),
    ROOT / "integrations" / "langchain" / "README.md",
    ROOT / "integrations" / "llamaindex" / "README.md",
]
RUN = {"python", "bash"}
SHOWN = {"text"}
BLOCK_TIMEOUT_S = 600

# Blocks that are shown but not run, by the name their page gives them, and why.
ILLUSTRATIONS = {
    "two-commands": "the main job and the test suite themselves: running them here would recurse",
    "install-langchain": "installs the package the suite itself runs from",
    "install-llamaindex": "installs the package the suite itself runs from",
    "test-langchain": "a part of the test suite itself: running it here would recurse",
    "extend-image": "builds an extended image from the reader's own requirements file",
    "bench-realcode-sdists": "downloads other sdists and runs for about 20 minutes",
    "ray-image-copy": "copies an image to another machine over ssh",
    "ray-install": "installs the package the suite itself runs from, on the reader's machines",
    "ray-token": "writes the reader's cluster token under /etc",
    "ray-cluster": "starts Ray on the reader's own machines (tests/test_ray_sandbox.py runs one)",
    "ray-check": "checks the reader's own Ray cluster (tests/test_ray_sandbox.py checks one)",
    "ray-serve": "serves against the reader's own Ray cluster (tests/test_ray_sandbox.py does)",
    "ray-agents": "talks to the reader's own service on another machine",
}

_FENCE = re.compile(r"^```(\S*)\s*$")
_ILLUSTRATION = re.compile(r"^<!-- illustration: ([a-z0-9-]+) -->$")
_MACHINE_PATHS = re.compile(r"/work/|/root/|/home/[a-z]")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    code: str
    illustration: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks_of(page: Path) -> list[Block]:
    """The fenced blocks of one page, with the illustration name the line before gives."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    index = 0
    while index < len(lines):
        opening = _FENCE.match(lines[index])
        if opening is None:
            index += 1
            continue
        end = index + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        if end == len(lines):
            raise AssertionError(f"{page.relative_to(ROOT)}:{index + 1}: unclosed code block")
        marker = _ILLUSTRATION.match(lines[index - 1]) if index else None
        found.append(
            Block(
                page=page,
                line=index + 1,
                language=opening.group(1),
                code="\n".join(lines[index + 1 : end]) + "\n",
                illustration=marker.group(1) if marker else None,
            )
        )
        index = end + 1
    return found


ALL_BLOCKS = [block for page in PAGES for block in blocks_of(page)]
RUNNABLE = [b for b in ALL_BLOCKS if b.language in RUN and b.illustration is None]


def test_every_block_says_what_it_is() -> None:
    untagged = [b.where for b in ALL_BLOCKS if b.language not in RUN | SHOWN]
    assert not untagged, f"tag these blocks python, bash or text: {untagged}"
    shown_marked = [b.where for b in ALL_BLOCKS if b.illustration and b.language in SHOWN]
    assert not shown_marked, f"text blocks are never run; drop the marker: {shown_marked}"


def test_illustrations_are_the_listed_ones() -> None:
    named = sorted(b.illustration for b in ALL_BLOCKS if b.illustration)
    assert len(named) == len(set(named)), f"illustration names repeat: {named}"
    unknown = set(named) - set(ILLUSTRATIONS)
    assert not unknown, f"blocks marked as illustrations without a reason here: {unknown}"
    unused = set(ILLUSTRATIONS) - set(named)
    assert not unused, f"ILLUSTRATIONS names blocks no page has: {unused}"


def test_no_page_carries_a_path_of_one_machine() -> None:
    hits = [
        f"{page.relative_to(ROOT)}:{number}"
        for page in PAGES
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if _MACHINE_PATHS.search(line)
    ]
    assert not hits, f"paths of a particular machine: {hits}"


def test_no_indented_code_blocks() -> None:
    """Indented blocks would escape the runner: every code block is fenced."""
    hits = []
    for page in PAGES:
        fenced = False
        previous = ""
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1):
            if line.startswith("```"):
                fenced = not fenced
            elif not fenced and line.startswith("    ") and previous.strip() == "":
                hits.append(f"{page.relative_to(ROOT)}:{number}")
            previous = line
    assert not hits, f"indented code blocks (fence them): {hits}"


def test_links_between_pages_resolve() -> None:
    broken = []
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#:]+\.md)(?:#[^)]*)?\)", page.read_text("utf-8")):
            if not (page.parent / target).is_file():
                broken.append(f"{page.relative_to(ROOT)} -> {target}")
    assert not broken, f"links to missing pages: {broken}"


@pytest.fixture(scope="module")
def page_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[Path, Path]:
    """One working folder per page, shared by its blocks in order."""
    return {
        page: tmp_path_factory.mktemp(page.parent.name + "-" + page.stem.lower()) for page in PAGES
    }


def _environment(work: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["GUARDRAIL_CACHE_DIR"] = str(work / ".guardrail-cache")
    env["GUARDRAIL_INDEX_DIR"] = str(work / ".guardrail-index")
    env.pop("GUARDRAIL_COLLECTION", None)
    return env


@pytest.mark.usefixtures("docker_sandbox")
@pytest.mark.parametrize("block", RUNNABLE, ids=[b.where for b in RUNNABLE])
def test_block_runs_as_written(block: Block, page_dirs: dict[Path, Path]) -> None:
    work = page_dirs[block.page]
    if block.language == "python":
        command = [sys.executable, "-c", block.code]
    else:
        command = ["bash", "-euo", "pipefail", "-c", block.code]
    done = subprocess.run(
        command,
        cwd=work,
        env=_environment(work),
        capture_output=True,
        text=True,
        timeout=BLOCK_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, (
        f"{block.where} exited {done.returncode}\n"
        f"--- stdout\n{done.stdout[-4000:]}\n--- stderr\n{done.stderr[-4000:]}"
    )
