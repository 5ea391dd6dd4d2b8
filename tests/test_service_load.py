"""`guardrail serve` under load: it degrades, never lies (issue 19 item 3).

A full queue is 429 with Retry-After, a passed deadline 504, a client that disconnects cancels
its jobs not yet dispatched, and a lost engine is 503 until it returns, without a restart. The
engine that is stopped is a private second dockerd (`second_engine`, conftest.py), never the
shared one. Each service has its own one-container pool, so the counts of jobs run are its own.
"""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from guardrail.errors import EngineUnavailableError, ServiceUnavailableError
from guardrail.sandbox.docker import DockerSandbox
from guardrail.service.interruptible import SLICE_PER_CONTAINER
from guardrail.service.server import service_gate
from guardrail.service.settings import ServiceSettings
from guardrail.spec import Spec
from guardrail.verdict import Status

if TYPE_CHECKING:
    from conftest import RunningService, SecondEngine

pytestmark = pytest.mark.docker

SPEC = Spec.from_tests(["assert square(3) == 9"])
GOOD = "def square(x):\n    return x * x\n"
BAD = "def square(x):\n    return x + x\n"


def slow(seconds: float, n: int) -> str:
    """A correct candidate that takes ``seconds`` (distinct text per ``n``: no cache can help)."""
    return f"import time\n\ndef square(x):\n    time.sleep({seconds})  # {n}\n    return x * x\n"


def _body(codes: list[str]) -> dict[str, Any]:
    return {"codes": codes, "spec": SPEC.model_dump(mode="json")}


def _wait_for(condition: Callable[[], bool], what: str, timeout_s: float = 60) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def _jobs_run(service: RunningService) -> int:
    jobs = service.client().health().pool.jobs_run
    assert jobs is not None
    return jobs


@pytest.fixture
def one_slot(docker_sandbox: object, start_service: Any) -> Iterator[Callable[..., RunningService]]:
    """``one_slot(**settings)``: a service judging one request at a time on one container."""
    started: list[RunningService] = []

    def start(**settings: Any) -> RunningService:
        settings = {"concurrency": 1, **settings}
        sandbox = DockerSandbox(pool_size=1)
        sandbox.warm_up()
        gate = service_gate(sandbox, ServiceSettings(**settings), cache=False)
        started.append(start_service(gate, **settings))
        return started[-1]

    yield start
    for service in started:
        service.stop()


def _post_in_thread(
    service: RunningService, codes: list[str], answers: list[Any]
) -> threading.Thread:
    def post() -> None:
        try:
            answers.append(service.http.post("/v1/verify", json=_body(codes)))
        except httpx.HTTPError as exc:
            answers.append(exc)

    thread = threading.Thread(target=post, daemon=True)
    thread.start()
    return thread


def test_a_full_queue_is_429_with_retry_after_and_the_admitted_requests_are_judged(
    one_slot: Callable[..., RunningService],
) -> None:
    service = one_slot(queue_size=1)
    answers: list[Any] = []
    running = _post_in_thread(service, [slow(1.5, 1)], answers)
    _wait_for(lambda: service.client().health().queue.running == 1, "the first to run")
    waiting = _post_in_thread(service, [slow(0.1, 2)], answers)
    _wait_for(lambda: service.client().health().queue.waiting == 1, "the second to wait")

    refused = service.http.post("/v1/verify", json=_body([GOOD]))

    assert refused.status_code == 429
    assert int(refused.headers["retry-after"]) >= 1
    assert refused.json()["error"]["kind"] == "QueueFull"
    with service.client(retries=0) as impatient, pytest.raises(ServiceUnavailableError):
        impatient.verify([BAD], SPEC)
    running.join(60)
    waiting.join(60)
    assert [a.status_code for a in answers] == [200, 200]
    assert all(a.json()["verdicts"][0]["status"] == "verified" for a in answers)
    with service.client(retries=5) as patient:  # retried after Retry-After: judged now
        assert patient.verify([BAD], SPEC)[0].status is Status.FAILED
    metrics = service.http.get("/metrics").text
    assert re.search(r'guardrail_refused_total\{reason="QueueFull"\} [2-9]', metrics)


def test_a_client_that_disconnects_cancels_its_remaining_jobs(
    one_slot: Callable[..., RunningService],
) -> None:
    service = one_slot()
    before = _jobs_run(service)
    codes = [slow(0.5, n) for n in range(3 * SLICE_PER_CONTAINER)]  # three slices of one box

    with pytest.raises(httpx.ReadTimeout):  # the client gives up and closes the connection
        service.http.post("/v1/verify", json=_body(codes), timeout=1.0)

    _wait_for(lambda: service.client().health().queue.running == 0, "the request to stop")
    ran = _jobs_run(service) - before
    assert SLICE_PER_CONTAINER <= ran < len(codes)  # the first slice, never all three
    metrics = service.http.get("/metrics").text
    assert 'guardrail_refused_total{reason="ClientGone"} 1' in metrics
    with service.client() as remote:  # the next request is judged as usual
        assert remote.verify([GOOD], SPEC)[0].status is Status.VERIFIED


def test_a_request_past_its_deadline_is_504_and_its_remaining_jobs_never_run(
    one_slot: Callable[..., RunningService],
) -> None:
    service = one_slot(deadline_s=1.0)
    before = _jobs_run(service)
    codes = [slow(0.5, 100 + n) for n in range(3 * SLICE_PER_CONTAINER)]

    answer = service.http.post("/v1/verify", json=_body(codes))

    assert answer.status_code == 504
    assert answer.json()["error"]["kind"] == "DeadlineExceeded"
    assert "deadline of 1 s" in answer.json()["error"]["message"]
    assert "retry-after" in answer.headers
    _wait_for(lambda: service.client().health().queue.running == 0, "the request to stop")
    assert _jobs_run(service) - before < len(codes)
    with service.client() as remote, pytest.raises(ServiceUnavailableError, match="deadline"):
        remote.verify([slow(2.0, 200)], SPEC)


def test_an_engine_lost_is_503_and_the_service_recovers_when_it_returns(
    second_engine: SecondEngine, start_service: Any
) -> None:
    sandbox = DockerSandbox(second_engine.image, client=second_engine.client(), pool_size=1)
    service = start_service(service_gate(sandbox, ServiceSettings(), cache=False))
    remote = service.client()
    try:
        assert remote.verify([GOOD, BAD], SPEC)[0].status is Status.VERIFIED
        second_engine.stop()
        try:
            with pytest.raises(EngineUnavailableError):
                remote.verify([GOOD, BAD], SPEC)
            answer = service.http.post("/v1/verify", json=_body([GOOD]))
            assert answer.status_code == 503
            assert answer.headers["retry-after"] == "5"
            health = service.http.get("/v1/health")
            assert health.status_code == 503
            assert health.json()["status"] == "unavailable"
            assert remote.health().engine != "ok"
        finally:
            second_engine.start()
        _wait_for(lambda: remote.health().status == "ok", "the engine to answer again")
        assert [v.status for v in remote.verify([GOOD, BAD], SPEC)] == [
            Status.VERIFIED,
            Status.FAILED,
        ]
    finally:
        remote.close()
        service.stop()
    assert second_engine.labelled(sandbox.owner) == []
