"""The replay policy (replay.py) as pure logic; tests/test_sandbox_faults.py runs it for real."""

from __future__ import annotations

from guardrail.sandbox.replay import BLAME_AFTER, FaultLedger


def test_a_fault_makes_the_first_unfinished_job_a_suspect_not_a_culprit() -> None:
    ledger = FaultLedger([0, 1, 2, 3])
    assert ledger.fault([0, 1, 2, 3], [0], solo=False) is None
    assert (ledger.suspect, ledger.pending) == (1, [1, 2, 3])
    ledger.finished([1])  # alone on a fresh container it finished: its own verdict stands
    assert (ledger.suspect, ledger.pending) == (None, [2, 3])


def test_a_suspect_is_blamed_only_after_killing_fresh_containers_alone() -> None:
    ledger = FaultLedger([0, 1])
    assert ledger.fault([0, 1], [], solo=False) is None
    for _ in range(BLAME_AFTER - 1):
        assert ledger.fault([0], [], solo=True) is None
        assert ledger.suspect == 0
    assert ledger.fault([0], [], solo=True) == 0
    assert ledger.pending == [1]
    assert ledger.suspect is None


def test_a_container_that_dies_after_its_last_answer_blames_nobody() -> None:
    ledger = FaultLedger([0, 1])
    assert ledger.fault([0, 1], [0, 1], solo=False) is None
    assert ledger.pending == []


def test_even_if_every_container_dies_the_faults_are_bounded() -> None:
    jobs = list(range(5))
    ledger = FaultLedger(jobs)
    faults = 0
    while ledger.pending:
        suspect = ledger.suspect
        batch = list(ledger.pending) if suspect is None else [suspect]
        ledger.fault(batch, [], solo=suspect is not None)  # nothing ever finishes
        faults += 1
    assert faults == len(jobs) * (BLAME_AFTER + 1)
