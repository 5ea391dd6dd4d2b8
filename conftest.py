"""Fixtures shared by every test tree (core, eval, integrations).

Tests that need Docker use the ``docker_sandbox`` or ``gate`` fixtures. When no engine or image is
available they fail loudly under CI (``CI`` set); on a developer laptop they skip with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from guardrail.cache import VerdictCache
from guardrail.gate import Gate


def _unavailable(reason: str) -> None:
    message = f"Docker sandbox unavailable: {reason}. Run `scripts/docker-up` first."
    if os.environ.get("CI"):
        pytest.fail(message, pytrace=False)
    pytest.skip(f"{message} (skipped because CI is unset: developer laptop only)")


@pytest.fixture(scope="session")
def docker_sandbox() -> Iterator[object]:
    """One real `DockerSandbox` (pool of hardened containers) shared by the whole session."""
    from guardrail.errors import SandboxError
    from guardrail.sandbox.docker import DockerSandbox

    try:
        sandbox = DockerSandbox(pool_size=2)
        sandbox.check_ready()
    except SandboxError as exc:
        _unavailable(str(exc))
    yield sandbox
    sandbox.close()


@pytest.fixture
def gate(docker_sandbox: object, tmp_path: Path) -> Iterator[Gate]:
    """A `Gate` over the session's Docker sandbox with a fresh, private verdict cache."""
    from guardrail.sandbox.docker import DockerSandbox

    assert isinstance(docker_sandbox, DockerSandbox)
    cache = VerdictCache(tmp_path / "verdicts.sqlite")
    yield Gate(docker_sandbox, cache=cache)
    cache.close()
