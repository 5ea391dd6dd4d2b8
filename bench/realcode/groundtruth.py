"""Ground truth: the real doctest of each function in its real imported module, in a container.

Library code runs only in containers: one ``docker run --rm --network none`` per batch, the
unpacked sdist mounted read-only on ``PYTHONPATH``, the stdlib-only ``worker.py`` as the program
(see it for the item format). The container is named so that an interrupted run can remove it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["DoctestItem", "RealOutcome", "TestsItem", "run_real"]

WORKER = Path(__file__).with_name("worker.py")
PASS = "pass"


@dataclass(frozen=True, slots=True)
class DoctestItem:
    """Run the doctest of ``module.qualname``; ``patch`` = (line, new text or None to delete);
    ``lines`` = (first, last) line of the definition meant: the name bound to another one is
    not ``here``."""

    id: str
    module: str
    qualname: str
    patch: tuple[int, str | None] | None = None
    lines: tuple[int, int] | None = None

    @classmethod
    def of(
        cls,
        id_: str,
        key: str,
        patch: tuple[int, str | None] | None = None,
        lines: tuple[int, int] | None = None,
    ) -> DoctestItem:
        """The item for ``key`` = ``module:qualname``."""
        module, _, qualname = key.partition(":")
        return cls(id_, module, qualname, patch, lines)

    def request(self) -> dict[str, Any]:
        patch = None if self.patch is None else {"line": self.patch[0], "text": self.patch[1]}
        lines = None if self.lines is None else list(self.lines)
        return {"id": self.id, "kind": "doctest", "module": self.module,
                "qualname": self.qualname, "patch": patch, "lines": lines}  # fmt: skip


@dataclass(frozen=True, slots=True)
class TestsItem:
    """Run assert statements against ``module.qualname`` in a copy of the module's globals."""

    __test__ = False  # not a pytest class

    id: str
    module: str
    qualname: str
    tests: tuple[str, ...]

    def request(self) -> dict[str, Any]:
        return {"id": self.id, "kind": "tests", "module": self.module,
                "qualname": self.qualname, "tests": list(self.tests)}  # fmt: skip


@dataclass(frozen=True, slots=True)
class RealOutcome:
    """What the real run said: ``pass``, ``fail``, ``no_examples``, ``error`` or ``timeout``."""

    outcome: str
    attempted: int = 0
    failed: int = 0
    detail: str = ""
    exercised: bool = True  # a doctest: its examples ran the function's own code
    here: bool = True  # ... and the name is bound to a definition in the module's own file

    @property
    def passed(self) -> bool:
        return self.outcome == PASS


def run_real(
    root: Path,
    items: Sequence[DoctestItem | TestsItem],
    *,
    image: str,
    timeout_s: float = 10.0,
    name: str = "realcode",
) -> dict[str, RealOutcome]:
    """Outcome per item id, from one container with ``root`` (read-only) on ``PYTHONPATH``.

    Raises:
        RuntimeError: the container failed as a whole or an item got no answer.
    """
    if not items:
        return {}
    container = f"guardrail-realbench-{name}-{os.getpid()}"
    command = ["docker", "run", "--rm", "-i", "--name", container, "--network", "none"]
    command += ["--read-only", "--tmpfs", "/tmp:rw,size=64m", "--user", "65534:65534"]
    command += ["--cap-drop", "ALL", "--security-opt", "no-new-privileges"]
    command += ["--memory", "2g", "--pids-limit", "128", "-w", "/tmp"]
    command += ["-v", f"{root.resolve()}:/src:ro", "-e", "PYTHONPATH=/src", "-e", "HOME=/tmp"]
    command += ["-e", "PYTHONDONTWRITEBYTECODE=1", image, "python3", "-c", WORKER.read_text()]
    request = json.dumps({"timeout": timeout_s, "items": [item.request() for item in items]})
    budget = 60 + len(items) * (timeout_s + 3)
    try:
        done = subprocess.run(
            command, input=request, capture_output=True, text=True, timeout=budget, check=False
        )
    except subprocess.TimeoutExpired:
        subprocess.run(["docker", "rm", "-f", container], capture_output=True, check=False)
        raise RuntimeError(f"ground-truth container {container} ran over {budget:.0f} s") from None
    if done.returncode != 0:
        raise RuntimeError(
            f"ground-truth container exited {done.returncode}: {done.stderr[-2000:]}"
        )
    outcomes: dict[str, RealOutcome] = {}
    for line in done.stdout.splitlines():
        row = json.loads(line)
        item_id = row.pop("id")
        outcomes[item_id] = RealOutcome(**row)
    missing = [item.id for item in items if item.id not in outcomes]
    if missing:
        raise RuntimeError(f"ground truth has no answer for {len(missing)} items: {missing[:5]}")
    return outcomes
