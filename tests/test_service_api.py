"""`guardrail serve` on loopback and on a unix socket: the token, the caps, the roots, and
verdicts identical to an in-process `Gate`.

A real service (uvicorn, the real `Gate` over its own `DockerSandbox` pool, a real Chroma index)
runs on a thread of the test process (`start_service`, conftest.py); requests go over real
sockets, through `RemoteGate` or a plain ``httpx`` client.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest

from guardrail.cache import VerdictCache
from guardrail.client import RemoteGate
from guardrail.errors import ServiceAuthError, SpecError
from guardrail.gate import Candidate, Gate
from guardrail.index import CodeIndex, Snippet
from guardrail.index.errors import IndexNotFoundError
from guardrail.probes import Probe
from guardrail.sandbox.docker import DockerSandbox
from guardrail.searching import gated_search
from guardrail.service.models import VerifyResponse
from guardrail.service.server import service_gate
from guardrail.service.settings import ServiceSettings
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status

if TYPE_CHECKING:
    from conftest import RunningService

pytestmark = pytest.mark.docker

SPEC = Spec.from_tests(["assert square(3) == 9", "assert square(-2) == 4"])
GOOD = "def square(x):\n    return x * x\n"
BAD = "def square(x):\n    return x + x\n"
ABS = "def square(x):\n    return x * abs(x)\n"
CODES = [
    GOOD,
    BAD,
    "def square(x) return x\n",  # error: syntax
    "import sys\nsys.exit(0)\ndef square(x):\n    return x * x\n",  # error: exits at import
    "def square(x):\n    return object()\n",  # unverifiable: unserialisable
    "def square(x):\n    while True:\n        pass\n",  # timeout
    "def cube(x):\n    return x ** 3\n",  # no entry point
]
ROUTES = [
    ("GET", "/v1/health"),
    ("GET", "/metrics"),
    ("GET", "/openapi.json"),
    ("POST", "/v1/verify"),
    ("POST", "/v1/gate"),
    ("POST", "/v1/observe"),
    ("POST", "/v1/search"),
    ("GET", "/no/such/route"),
]
CAPS = {"max_candidates": 10, "max_tests": 20, "max_body_bytes": 64 << 10, "max_fetch_k": 30}
COLLECTION = "service-snippets"


@pytest.fixture(scope="module")
def context_tree(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Two copies of one package: under a configured context root, and outside every root."""
    folders = {}
    for name in ("allowed", "outside"):
        root = tmp_path_factory.mktemp(name)
        (root / "pkg").mkdir()
        (root / "pkg" / "__init__.py").write_text("")
        (root / "pkg" / "mod.py").write_text(
            "FACTOR = 3\n\ndef helper(x):\n    return x * FACTOR\n\n"
            "def triple(x):\n    return helper(x)\n"
        )
        folders[name] = root.resolve()
    return folders


@pytest.fixture(scope="module")
def index_dir(tmp_path_factory: pytest.TempPathFactory, minilm: Any) -> Path:
    path = tmp_path_factory.mktemp("index")
    index = CodeIndex(COLLECTION, path=path, embedding_function=minilm)
    index.add(
        Snippet(
            code=code,
            entry_point="square",
            qualified_name=f"m{n}.square",
            file=f"src/m{n}.py",
            start_line=1,
            end_line=2,
        )
        for n, code in enumerate((GOOD, BAD, ABS))
    )
    return path


@pytest.fixture(scope="module")
def service(
    docker_sandbox: object,
    start_service: Any,
    tmp_path_factory: pytest.TempPathFactory,
    context_tree: dict[str, Path],
    index_dir: Path,
) -> Iterator[RunningService]:
    settings: dict[str, Any] = {
        **CAPS,
        "context_roots": (context_tree["allowed"],),
        "index_dir": index_dir,
    }
    cache = VerdictCache(tmp_path_factory.mktemp("service-cache") / "verdicts.sqlite")
    gate = service_gate(DockerSandbox(pool_size=2), ServiceSettings(**settings), cache=cache)
    running = start_service(gate, **settings)
    yield running
    running.stop()
    cache.close()


# -- item 2: the token on every endpoint ---------------------------------------------------------


@pytest.mark.parametrize(("method", "path"), ROUTES)
@pytest.mark.parametrize(
    "authorization", [None, "Bearer wrong-token-0123456789", "Basic dGVzdDp0ZXN0", "Bearer"]
)
def test_every_endpoint_refuses_a_request_without_the_token(
    service: RunningService, method: str, path: str, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = httpx.request(method, service.url + path, headers=headers, json={})
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    assert response.json()["error"]["kind"] == "Unauthorized"


def test_a_remote_gate_with_a_wrong_token_raises_the_auth_error(service: RunningService) -> None:
    with service.client(token="wrong-token-0123456789") as remote, pytest.raises(ServiceAuthError):
        remote.verify([GOOD], SPEC)


def test_with_the_token_health_metrics_and_the_schema_answer(service: RunningService) -> None:
    health = service.client().health()
    assert health.status == "ok"
    assert health.engine == "ok"
    assert health.runtime == "runc"
    assert health.image is not None and health.image.startswith("sha256:")
    assert health.pool.size == 2
    assert health.queue.concurrency == 8
    metrics = service.http.get("/metrics")
    assert metrics.status_code == 200
    assert metrics.headers["content-type"].startswith("text/plain; version=0.0.4")
    assert 'guardrail_requests_total{method="GET",route="/v1/health",status="200"}' in metrics.text
    assert "guardrail_pool_size 2" in metrics.text
    schema = service.http.get("/openapi.json").json()
    assert {"/v1/verify", "/v1/gate", "/v1/observe", "/v1/search", "/v1/health"} <= set(
        schema["paths"]
    )
    assert "Verdict" in schema["components"]["schemas"]


# -- item 2: caps, with clear 4xx ---------------------------------------------------------------


def _error(response: httpx.Response, status: int) -> dict[str, str]:
    assert response.status_code == status, response.text
    error: dict[str, str] = response.json()["error"]
    return error


def test_a_body_over_the_limit_is_413_announced_or_chunked(service: RunningService) -> None:
    big = json.dumps({"codes": ["x" * (70 << 10)], "spec": None}).encode()
    error = _error(service.http.post("/v1/verify", content=big), 413)
    assert "65,536 bytes" in error["message"]

    def chunks() -> Iterator[bytes]:  # no Content-Length: counted while read
        for start in range(0, len(big), 8192):
            yield big[start : start + 8192]

    error = _error(service.http.post("/v1/verify", content=chunks()), 413)
    assert error["kind"] == "RequestTooLargeError"


def test_too_many_candidates_tests_or_snippets_are_413_naming_the_cap(
    service: RunningService,
) -> None:
    many = {"codes": [GOOD] * 11, "spec": SPEC.model_dump(mode="json")}
    assert "at most 10" in _error(service.http.post("/v1/verify", json=many), 413)["message"]
    tests = Spec.from_tests([f"assert square({n}) == {n * n}" for n in range(21)])
    body = {"codes": [GOOD], "spec": tests.model_dump(mode="json")}
    error = _error(service.http.post("/v1/verify", json=body), 413)
    assert error["message"] == "21 tests in one request; this server takes at most 20"
    assert "--max-tests" in error["hint"]
    search = {"collection": COLLECTION, "query": "square", "fetch_k": 31}
    assert "at most 30" in _error(service.http.post("/v1/search", json=search), 413)["message"]


def test_bad_bodies_are_422_and_name_the_problem(service: RunningService) -> None:
    unparseable = {"codes": [GOOD], "spec": {"tests": ["assert ("], "entry_point": "square"}}
    error = _error(service.http.post("/v1/verify", json=unparseable), 422)
    assert "does not parse" in error["message"]
    assert "spec" in error["message"]
    misspelt = {"codes": [GOOD], "spec": None, "metdata": None}
    assert "metdata" in _error(service.http.post("/v1/verify", json=misspelt), 422)["message"]
    lengths = {"codes": [GOOD, BAD], "spec": None, "metadata": [None]}
    assert (
        "1 metadata for 2" in _error(service.http.post("/v1/verify", json=lengths), 422)["message"]
    )
    probe = Probe(entry_point="cube", args=("2",), origin="test")
    with service.client() as remote, pytest.raises(SpecError, match="does not call the spec"):
        remote.observe([GOOD], SPEC, [probe])  # the Gate's own SpecError, typed again here


# -- item 2: host paths: collections by name, context only under configured roots -------------


def test_collections_are_names_never_paths(service: RunningService) -> None:
    for name in ("../../etc", "/tmp/index", "a"):
        body = {"collection": name, "query": "square"}
        error = _error(service.http.post("/v1/search", json=body), 422)
        assert "collection" in error["message"]
    with service.client() as remote, pytest.raises(IndexNotFoundError):
        remote.search("square", collection="no-such-collection")


def test_module_context_is_read_only_under_configured_roots(
    service: RunningService, context_tree: dict[str, Path]
) -> None:
    spec = Spec.from_tests(["assert triple(2) == 6"])
    code = "def triple(x):\n    return helper(x)\n"
    metadata = [
        {"root": str(context_tree[name]), "file": "pkg/mod.py", "module": "pkg.mod"}
        for name in ("allowed", "outside")
    ]
    with service.client() as remote:
        allowed, outside = remote.verify([code, code], spec, metadata=metadata)
    assert allowed.status is Status.VERIFIED
    assert outside.status is Status.UNVERIFIABLE
    assert outside.reason is Reason.MISSING_CONTEXT


# -- item 3: verdicts byte-identical to the in-process Gate -----------------------------------


def test_verdicts_match_an_in_process_gate_on_every_status(
    service: RunningService, gate: Gate
) -> None:
    specs: list[Spec | None] = [SPEC] * len(CODES) + [None]
    codes = [*CODES, GOOD]
    with service.client() as remote:
        remote_verdicts = remote.verify(codes, specs)
    local = gate.verify(codes, specs)
    assert {v.status for v in local} == set(Status)  # every status, so the check means something

    def judged(verdict: Any) -> dict[str, Any]:  # what a run decides, not how long it took
        return dict(verdict.model_dump(mode="json", exclude={"duration_s", "cpu_s"}))

    assert [judged(v) for v in remote_verdicts] == [judged(v) for v in local]


CRASHING = [  # each takes down the process running it, never the judge of another request
    "import ctypes\n\ndef square(x):\n    return ctypes.string_at(0)\n",  # a segfault
    "import os, signal\n\ndef square(x):\n    os.kill(os.getpid(), signal.SIGKILL)\n",
    "import os\nos._exit(3)\n",  # gone at import
    "def square(x):\n    return square(x)\n",  # recursion to the end of the stack
]


async def test_a_request_that_crashes_its_runs_leaves_another_requests_verdicts_alone(
    service: RunningService, gate: Gate
) -> None:
    mixed = [GOOD, BAD, ABS, GOOD.replace("x * x", "x ** 2")]
    with service.client() as remote:
        rounds = [
            await asyncio.gather(
                remote.averify([f"{c}# crash {n}\n" for c in CRASHING], SPEC),
                remote.averify(mixed, SPEC),
                remote.averify([f"{c}# crash again {n}\n" for c in CRASHING], SPEC),
            )
            for n in range(2)
        ]
    local = gate.verify(mixed, SPEC)

    def judged(verdict: Any) -> dict[str, Any]:
        return dict(verdict.model_dump(mode="json", exclude={"duration_s", "cpu_s", "cached"}))

    for crashed, honest, crashed_again in rounds:
        assert [judged(v) for v in honest] == [judged(v) for v in local]
        for verdict in [*crashed, *crashed_again]:
            assert verdict.status is not Status.VERIFIED, verdict


_STARVED_TRIES = 6
"""A loop starved below 80% of a CPU (a loaded machine) is not cached and runs again: asked up to
this many times until the service answers it from its cache."""


def _timeouts_cached(response: httpx.Response) -> bool:
    verdicts = VerifyResponse.model_validate_json(response.content).verdicts
    return all(v.cached for v in verdicts if v.status is Status.TIMEOUT)


def test_cached_verdicts_cross_the_wire_byte_for_byte(
    service: RunningService, docker_sandbox: DockerSandbox
) -> None:
    """An in-process Gate reading the service's own cache gives the very bytes the service
    sends: nothing is lost or changed in transit (floats, escaped text, aliases, outcomes)."""
    codes = [*CODES, "def sq(x):\n    return x * x\n"]  # bound through an alias
    body = {"codes": codes, "spec": SPEC.model_dump(mode="json")}
    assert service.http.post("/v1/verify", json=body).status_code == 200  # fills its cache
    for _ in range(_STARVED_TRIES):
        sent = service.http.post("/v1/verify", json=body)
        if _timeouts_cached(sent):
            break
    assert _timeouts_cached(sent), f"in {_STARVED_TRIES} tries the loop never got 80% of a CPU"
    assert service.gate.cache is not None
    cache = VerdictCache(service.gate.cache.path)
    jobs_before = docker_sandbox.stats.jobs_run
    try:
        local = Gate(docker_sandbox, cache=cache).verify(codes, SPEC)
    finally:
        cache.close()
    assert docker_sandbox.stats.jobs_run == jobs_before  # all from the cache (or the precheck)
    assert sum(v.cached for v in local) >= 5
    assert sent.content == VerifyResponse(verdicts=local).model_dump_json().encode()


def test_gate_and_search_match_the_in_process_gate_and_ask_the_same_question(
    service: RunningService, gate: Gate, index_dir: Path, minilm: Any
) -> None:
    spec = Spec.from_tests(["assert square(3) == 9"])  # GOOD and ABS pass; they disagree on -2
    candidates = [Candidate(code=code, id=f"c{n}") for n, code in enumerate((BAD, GOOD, ABS))]
    with service.client() as remote:
        remote_result = remote.gate(candidates, spec)
        found = remote.search("square a number", collection=COLLECTION, spec=spec, fetch_k=3)
    local_result = gate.gate(candidates, spec)
    index = CodeIndex(COLLECTION, path=index_dir, embedding_function=minilm, create=False)
    local_search, sources = gated_search(index, gate, "square a number", spec, fetch_k=3)

    def decided(result: Any) -> list[tuple[str, str, int]]:
        return [(g.candidate.code, g.verdict.status.value, g.retrieval_rank) for g in result.kept]

    assert decided(remote_result) == decided(local_result)
    assert remote_result.question is not None and local_result.question is not None
    assert remote_result.question.render() == local_result.question.render()
    assert decided(found.result) == decided(local_search)
    assert found.spec_sources == sources
    assert [g.verdict.status for g in found.result.kept] == [Status.VERIFIED] * 2


# -- a unix socket ------------------------------------------------------------------------------


async def test_a_unix_socket_service_is_private_and_serves_sync_and_async(
    docker_sandbox: object, start_service: Any, tmp_path: Path
) -> None:
    socket_path = Path(os.path.realpath("/tmp")) / f"gr-svc-{os.getpid()}-{tmp_path.name[-8:]}.sock"
    settings = ServiceSettings(socket=socket_path)
    gate = service_gate(DockerSandbox(pool_size=1), settings, cache=False)
    running = start_service(gate, socket=socket_path)
    try:
        assert stat.S_IMODE(socket_path.stat().st_mode) == 0o600
        assert running.url == f"unix://{socket_path}"
        remote = RemoteGate(running.url, token=running.token)
        assert [v.status for v in remote.verify([GOOD, BAD], SPEC)] == [
            Status.VERIFIED,
            Status.FAILED,
        ]
        verdicts = await remote.averify([BAD, GOOD], SPEC)
        assert [v.status for v in verdicts] == [Status.FAILED, Status.VERIFIED]
        await remote.aclose()
    finally:
        running.stop()
        socket_path.unlink(missing_ok=True)


# -- item 4: `guardrail search|verify --server` -------------------------------------------------


def _decisions(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [(r.get("id"), r.get("rank"), r["verdict"]["status"] if "verdict" in r else r["status"])
            for r in rows]  # fmt: skip


@pytest.mark.usefixtures("isolated_cli")
def test_search_and_verify_with_server_print_what_the_local_commands_print(
    service: RunningService, index_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from typer.testing import CliRunner

    from guardrail.cli.app import app

    runner = CliRunner()
    tests = tmp_path / "tests.py"
    tests.write_text("assert square(3) == 9\nassert square(-2) == 4\n")
    search = ["search", "square a number", "--collection", COLLECTION, "--tests", str(tests)]
    local = runner.invoke(app, [*search, "--path", str(index_dir), "--json", "--fetch-k", "3"])
    monkeypatch.setenv("GUARDRAIL_TOKEN", service.token)
    remote = runner.invoke(app, [*search, "--server", service.url, "--json", "--fetch-k", "3"])
    assert remote.exit_code == local.exit_code == 0, remote.output + local.output
    here, there = json.loads(local.stdout), json.loads(remote.stdout)
    assert _decisions(there["results"]) == _decisions(here["results"])
    assert _decisions(there["dropped"]) == _decisions(here["dropped"])
    assert there["collection"] == here["collection"] == COLLECTION
    table = runner.invoke(app, [*search, "--server", service.url])
    assert "guardrail search: square a number" in table.stdout
    assert "policy rerank: 1 handed over" in table.stdout

    files = []
    for name, code in (("good", GOOD), ("bad", BAD)):
        files.append(tmp_path / f"{name}.py")
        files[-1].write_text(code)
    verify = ["verify", *map(str, files), "--tests", str(tests), "--json"]
    local = runner.invoke(app, verify)
    remote = runner.invoke(app, [*verify, "--server", service.url])
    assert remote.exit_code == local.exit_code == 0
    assert _decisions(json.loads(remote.stdout)) == _decisions(json.loads(local.stdout))
    refused = runner.invoke(app, [*verify, "--server", service.url, "--no-cache"])
    assert refused.exit_code == 2
    assert "--no-cache configures a local sandbox" in refused.output
    monkeypatch.setenv("GUARDRAIL_TOKEN", "wrong-token-0123456789")
    wrong = runner.invoke(app, [*verify, "--server", service.url])
    assert wrong.exit_code == 2
    assert "bearer token is required" in wrong.output
    gone = runner.invoke(app, [*verify, "--server", "http://127.0.0.1:9"])
    assert gone.exit_code == 3
    assert "no guardrail server answered" in gone.output
