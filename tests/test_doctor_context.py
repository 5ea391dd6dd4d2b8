"""`guardrail sandbox check`'s module-context probes (`guardrail.sandbox.doctor_context`)."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from guardrail.sandbox.base import Job, Sandbox
from guardrail.sandbox.docker import DockerSandbox
from guardrail.sandbox.doctor_context import MODULE_PROBES, module_context_checks
from guardrail.verdict import Reason, Status, TestOutcome, Verdict


class _VerifiesEverything(Sandbox):
    """A sandbox whose runner has lost the checks: every job passes."""

    identity = "test-double"

    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        passed = (TestOutcome(test=t, outcome="pass") for t in ("a", "b"))
        return [Verdict(status=Status.VERIFIED, reason=Reason.PASSED, tests=tuple(passed))] * len(
            jobs
        )


def test_the_probes_fail_a_runner_that_verifies_hostile_modules() -> None:
    checks = module_context_checks(_VerifiesEverything())
    failed = {name for name, held, _ in checks if not held}
    assert failed == {name for name, (_, _, must) in MODULE_PROBES.items() if not must}
    assert all("verified/passed" in detail for name, held, detail in checks if not held)


@pytest.mark.docker
def test_the_real_runner_holds_every_module_context_probe(sandbox_runtime: str) -> None:
    with DockerSandbox(pool_size=1, runtime=sandbox_runtime) as sandbox:
        checks = module_context_checks(sandbox)
    assert [(name, held) for name, held, _ in checks] == [(name, True) for name in MODULE_PROBES]
