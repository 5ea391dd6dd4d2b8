"""`RaySandbox`'s plain-data parts, without a cluster: what crosses to the actors, chunking and
blame. The cluster itself is tested for real in ``test_ray_sandbox.py``."""

from __future__ import annotations

import pytest

from guardrail.errors import SandboxError
from guardrail.sandbox.base import Job
from guardrail.sandbox.rayjudge import (
    job_from_text,
    job_to_text,
    verdicts_from_text,
    verdicts_to_text,
)
from guardrail.sandbox.raysandbox import (
    _CHUNK_BYTES,
    RaySandbox,
    _Chunk,
    _Slot,
    require_token_auth,
)
from guardrail.sandbox.replay import BLAME_AFTER
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict

SPEC = Spec.build(["assert f(1) == 2"], "f", setup="import math")


def test_a_job_crosses_as_a_string_and_comes_back_whole() -> None:
    job = Job("def g(x):\n    return x + 1\n", SPEC, context={"module": "m"}, bind={"f": "g"})
    text = job_to_text(job)
    assert isinstance(text, str)
    assert job_from_text(text) == job


def test_verdicts_cross_as_one_string() -> None:
    verdicts = [
        Verdict.unjudged(Status.ERROR, Reason.SANDBOX_FAULT, "boom \u2603"),
        Verdict.unjudged(Status.UNVERIFIABLE, Reason.MISSING_CONTEXT, "no module"),
    ]
    assert verdicts_from_text(verdicts_to_text(verdicts)) == verdicts


@pytest.mark.parametrize("mode", [None, "", "disabled", "tokens"])
def test_anything_but_token_auth_is_refused(
    monkeypatch: pytest.MonkeyPatch, mode: str | None
) -> None:
    if mode is None:
        monkeypatch.delenv("RAY_AUTH_MODE", raising=False)
    else:
        monkeypatch.setenv("RAY_AUTH_MODE", mode)
    with pytest.raises(SandboxError, match="token authentication"):
        require_token_auth()
    monkeypatch.setenv("RAY_AUTH_MODE", "Token")
    require_token_auth()


def _bare(slots: int, chunk_jobs: int | None = None) -> RaySandbox:
    """A RaySandbox's bookkeeping alone (no cluster): enough for chunking and blame."""
    sandbox = RaySandbox.__new__(RaySandbox)
    sandbox.chunk_jobs = chunk_jobs
    sandbox._slots = [_Slot(node=f"n{i}", actor=None, usable=True) for i in range(slots)]
    return sandbox


def test_chunks_keep_the_order_and_stay_under_the_byte_limit() -> None:
    texts = ["x" * 10] * 10
    chunks = _bare(2)._chunks(texts)
    assert [c.indices for c in chunks] == [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    assert [c.indices for c in _bare(1, chunk_jobs=4)._chunks(texts)] == [
        [0, 1, 2, 3],
        [4, 5, 6, 7],
        [8, 9],
    ]
    big = ["y" * (_CHUNK_BYTES // 2 + 1)] * 3
    assert [c.indices for c in _bare(1)._chunks(big)] == [[0], [1], [2]]


def test_a_killed_chunk_is_replayed_alone_and_only_a_repeat_killer_is_blamed() -> None:
    sandbox = _bare(2)
    slot = sandbox._slots[0]
    verdicts: dict[int, Verdict] = {}
    solo = sandbox._after_kill(_Chunk([3, 4, 5]), slot, verdicts)
    assert [(c.indices, c.solo) for c in solo] == [([3], True), ([4], True), ([5], True)]
    again = solo[0]
    for _ in range(BLAME_AFTER - 1):
        assert sandbox._after_kill(again, slot, verdicts) == [again]
    assert sandbox._after_kill(again, slot, verdicts) == []
    assert verdicts[3].reason is Reason.SANDBOX_FAULT
    assert verdicts[3].status is Status.ERROR
    assert set(verdicts) == {3}  # neighbours are never blamed
