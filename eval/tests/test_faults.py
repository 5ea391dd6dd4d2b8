"""Sandbox faults never become published numbers: re-run, counted, named, never cached.

Faults are real: containers of the test's own sandbox (found by its owner label) are killed by id
with the Docker engine, and load is two busy processes. Two kinds of kill (`KillingSandbox`):

* between two ``run`` calls: the `DockerSandbox` itself replays the jobs a dead container had not
  finished on a fresh one, so the numbers must come out as a clean run's;
* *doomed* calls, where every container is killed right after it started: the sandbox blames
  each job in turn (``sandbox_fault``), and the eval's own retries are the second line; what is
  still a fault after them must be counted and named, never published as a number.

Doomed calls cost a few container starts per job, so they set the sandbox's blame threshold to
one death (`guardrail.sandbox.replay.BLAME_AFTER`; the rule itself is tested with the default in
tests/test_sandbox_faults.py).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

import guardrail.sandbox.replay as replay
import guardrail_eval.cli as eval_cli
import guardrail_eval.pools.builtin as builtin
from guardrail.cli.app import app
from guardrail.gate import Gate
from guardrail.sandbox.base import Job
from guardrail.sandbox.container import Container
from guardrail.sandbox.docker import OWNER_LABEL, DockerSandbox
from guardrail.sandbox.shipping import RUNNER_VERSION
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict
from guardrail_eval.build import BuildFault, build_pool, read_build_report, write_built_pool
from guardrail_eval.faults import SANDBOX_FAULT, STARVED_TIMEOUT, RetryingSandbox
from guardrail_eval.humaneval import (
    humaneval_cache_dir,
    is_clean_build,
    load_humaneval_pool,
    read_problems,
)
from guardrail_eval.pool import Pool, load_pool
from guardrail_eval.pools import TaskSource
from guardrail_eval.pools.builtin import load_task_sources
from guardrail_eval.validation import validate_pool

MISLABELLED = Path(__file__).parent / "fixtures" / "mislabelled"
TIMEOUT_S = 2.0  # the test sandboxes' limit: short, so starved and patient runs stay short
runner = CliRunner()


class KillingSandbox(DockerSandbox):
    """The real `DockerSandbox`, whose own containers are killed by id.

    Before every ``every``-th call of `run` (0: never), up to call ``until``, the pool is
    started (`warm_up`) and every running container of this sandbox (its owner label) killed, so
    that each chunk of the call meets a dead container. A call from ``doomed_from`` (default: the
    first) up to ``doomed_until`` first kills
    the running containers, then every container it starts (or the first ``doomed_starts``) right
    after it has started, so no job of those calls can finish (or only the later ones).
    It stays a `DockerSandbox`, so the patient twin a `RetryingSandbox` makes of it is a plain
    one, which nobody kills.
    """

    def __init__(
        self,
        *,
        every: int = 0,
        until: int | None = None,
        doomed_until: int = 0,
        doomed_starts: int | None = None,
        doomed_from: int = 1,
        **options: Any,
    ) -> None:
        super().__init__(**options)
        self.every = every
        self.until = until
        self.doomed_from = doomed_from
        self.doomed_until = doomed_until
        self.doomed_starts = doomed_starts
        self.calls = 0
        self.kills = 0
        self._doomed_left: int | None = 0

    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        self.calls += 1
        doomed = self.doomed_from <= self.calls <= self.doomed_until
        self._doomed_left = self.doomed_starts if doomed else 0
        if doomed:  # a live container would let the call through
            self.kills += self.kill_own_containers()
        due = self.every and self.calls % self.every == 0
        if due and (self.until is None or self.calls <= self.until):
            self.warm_up()
            self.kills += self.kill_own_containers()
        return super().run(jobs)

    def _start(self) -> Container:
        container = super()._start()
        if self._doomed_left is None or self._doomed_left > 0:
            if self._doomed_left is not None:
                self._doomed_left -= 1
            container.container.kill()
            self.kills += 1
        return container

    def kill_own_containers(self) -> int:
        """Kill, by id, every running container of this sandbox (never anyone else's)."""
        containers = self.client.containers.list(filters={"label": f"{OWNER_LABEL}={self.owner}"})
        for container in containers:
            assert container.labels[OWNER_LABEL] == self.owner
            container.kill()
        return len(containers)


@pytest.fixture
def own_sandbox(docker_sandbox: object) -> Iterator[KillingSandbox]:
    """A sandbox of this test's own (its containers may be killed), with a 2 s limit."""
    sandbox = KillingSandbox(pool_size=2, timeout_s=TIMEOUT_S)
    yield sandbox
    sandbox.close()


@pytest.fixture
def quick_blame(monkeypatch: pytest.MonkeyPatch) -> None:
    """Blame a job after one death alone, not two: doomed calls then start half the containers."""
    monkeypatch.setattr(replay, "BLAME_AFTER", 1)


@pytest.fixture
def cpu_hog() -> Iterator[None]:
    """Two processes that keep both cores busy for as long as the test runs."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    yield
    for hog in hogs:
        hog.kill()
        hog.wait()


def small_tasks(count: int) -> list[TaskSource]:
    """``count`` built-in tasks of different domains."""
    firsts = {task.domain: task for task in reversed(load_task_sources())}
    return [firsts[domain] for domain in sorted(firsts)[:count]]


SQUARE = Spec.from_tests(["assert square(2) == 4", "assert square(3) == 9"])


def square_code(n: int) -> str:
    return f"def square(x):\n    return x * x + {n} - {n}\n"


@pytest.mark.docker
def test_a_killed_container_is_rerun_and_a_fault_left_is_reported(
    own_sandbox: KillingSandbox, quick_blame: None
) -> None:
    jobs = [Job(square_code(n), SQUARE) for n in range(4)]
    own_sandbox.doomed_until = 1  # nothing of the first call can finish
    retrying = RetryingSandbox.around(own_sandbox, retries=0)
    verdicts = retrying.run(jobs)
    assert own_sandbox.kills >= 4
    assert [v.reason for v in verdicts] == [Reason.SANDBOX_FAULT] * 4
    assert {u.reason for u in retrying.unsettled} == {SANDBOX_FAULT}
    assert retrying.retried == 0

    own_sandbox.doomed_until = 2  # the next call is doomed too; the retry after it is not
    retrying = RetryingSandbox.around(own_sandbox)
    verdicts = retrying.run(jobs)
    assert [v.status for v in verdicts] == [Status.VERIFIED] * 4
    assert retrying.retried == 4 and retrying.unsettled == []
    assert retrying.jobs == 4  # first runs only: the retries are counted apart


@pytest.mark.docker
def test_faults_while_checking_pool_labels_are_never_contradictions(
    own_sandbox: KillingSandbox, quick_blame: None
) -> None:
    pool = load_pool(MISLABELLED)  # two labels there contradict execution
    own_sandbox.doomed_until = 3  # the check's one run and both its retries
    validation = validate_pool(pool, Gate(own_sandbox, cache=False))
    assert validation.contradictions == []
    pairs = {(f.query_id, f.corpus_id, f.reason) for f in validation.faults}
    assert len(pairs) == 7 and {reason for _, _, reason in pairs} == {SANDBOX_FAULT}
    _, summary = validation.settle()  # nothing is known to be wrong, so nothing is refused
    # Seven (query, snippet) pairs against the suite, and the canonicals' 11 units alone.
    assert len(summary.faults) == 18 and summary.relabelled == []
    assert len([f for f in summary.faults if f.unit is not None]) == summary.units == 11

    own_sandbox.calls, own_sandbox.doomed_until = 0, 1  # the first retry finds the real verdicts
    validation = validate_pool(pool, Gate(own_sandbox, cache=False))
    assert validation.faults == [] and validation.retried == 18
    assert [c.corpus_id for c in validation.contradictions] == ["c_0003", "c_0004"]


@pytest.mark.docker
def test_kills_between_runs_are_replayed_by_the_sandbox_itself(
    own_sandbox: KillingSandbox,
) -> None:
    jobs = [Job(square_code(n), SQUARE) for n in range(4)]
    own_sandbox.every = 1
    retrying = RetryingSandbox.around(own_sandbox)
    verdicts = retrying.run(jobs)
    assert own_sandbox.kills >= 1 and own_sandbox.stats.faults >= 1
    assert [v.status for v in verdicts] == [Status.VERIFIED] * 4
    assert retrying.retried == 0 and retrying.unsettled == []


BURN = (
    "import time\n"
    "def burn(seconds):\n"
    "    start = time.process_time()\n"
    "    while time.process_time() - start < seconds:\n"
    "        pass\n"
    "    return seconds\n"
    "def nap(seconds):\n"
    "    time.sleep(seconds)\n"
    "    return seconds\n"
)


@pytest.mark.docker
def test_starved_timeouts_are_judged_by_cpu_time_under_load(
    own_sandbox: KillingSandbox, cpu_hog: None
) -> None:
    slow = Spec.from_tests(["assert burn(1.0) == 1.0"])  # half the limit: valid when idle
    endless = Spec.from_tests(["assert burn(60) == 60"])  # over the limit on any machine
    asleep = Spec.from_tests(["assert nap(60) == 60"])  # no CPU used: no limit decides it
    retrying = RetryingSandbox.around(own_sandbox)
    try:
        slow_v, endless_v, asleep_v = retrying.run([Job(BURN, s) for s in (slow, endless, asleep)])
    finally:
        retrying.close()
    assert slow_v.status is Status.VERIFIED, slow_v
    assert endless_v.status is Status.TIMEOUT and endless_v.busy_timeout, endless_v
    # Asleep, it never uses the CPU: no limit decides it, so it stays a fault, named.
    assert asleep_v.status is Status.TIMEOUT and not asleep_v.busy_timeout
    assert [u.reason for u in retrying.unsettled] == [STARVED_TIMEOUT]
    assert retrying.unsettled[0].job.spec == asleep
    assert retrying.retried >= 2  # the sleeper twice (the others only if they were starved)


def rows(folder: Path) -> dict[str, bytes]:
    names = ("corpus.jsonl", "queries.jsonl", "distractor_metadata.jsonl")
    return {name: (folder / name).read_bytes() for name in names}


@pytest.mark.docker
def test_a_build_under_load_and_kills_gives_the_same_rows(
    own_sandbox: KillingSandbox, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    tasks = small_tasks(4)
    pool, report = build_pool(tasks, Gate(own_sandbox, cache=False), seed=7, name="mini")
    assert report.clean is True and report.retried == 0 and report.faults == []
    assert report.runner_version == RUNNER_VERSION and report.image_id == own_sandbox.image_id
    clean = rows(write_built_pool(pool, report, tmp_path / "clean"))

    request.getfixturevalue("cpu_hog")
    own_sandbox.every = 3
    loaded_pool, loaded = build_pool(tasks, Gate(own_sandbox, cache=False), seed=7, name="mini")
    assert own_sandbox.kills >= 2
    assert own_sandbox.stats.faults >= 1, "the kills must have been seen"
    assert loaded.clean is True, loaded.faults
    folder = write_built_pool(loaded_pool, loaded, tmp_path / "loaded")
    assert rows(folder) == clean
    saved = read_build_report(load_pool(folder.parent))
    assert saved is not None and saved.retried == loaded.retried and saved.seed == 7


@pytest.fixture
def mini_humaneval(tmp_path: Path) -> Path:
    problems = {p["task_id"]: p for p in read_problems()}
    path = tmp_path / "mini.jsonl.gz"
    with gzip.open(path, "wt", encoding="utf-8") as handle:
        for task_id in ("HumanEval/0", "HumanEval/53", "HumanEval/12"):
            handle.write(json.dumps(problems[task_id]) + "\n")
    return path


@pytest.mark.docker
def test_a_build_left_with_faults_is_flagged_and_never_reused(
    mini_humaneval: Path, tmp_path: Path, quick_blame: None, docker_sandbox: object
) -> None:
    # One container at a time, so the doomed starts are those of the first canonical alone.
    own_sandbox = KillingSandbox(pool_size=1, timeout_s=TIMEOUT_S, doomed_starts=2)
    root = tmp_path / "pools"
    folder = humaneval_cache_dir(1, root, mini_humaneval)

    def load() -> Pool:
        gate = Gate(own_sandbox, cache=False)
        return load_humaneval_pool(gate, 1, cache_root=root, data_path=mini_humaneval)

    # The canonicals' call and both its retries are doomed for their first two container starts:
    # the first canonical kills its batch's container and then its own, and is blamed; the
    # others are judged on the next container. Its retries meet the same fate.
    own_sandbox.doomed_until = 3
    faulted = load()
    report = read_build_report(faulted)
    assert report is not None and report.clean is False
    assert [(f.task_id, f.candidate, f.reason) for f in report.faults] == [
        ("HumanEval/0", "canonical", SANDBOX_FAULT)
    ]
    named = {f.task_id for f in report.faults}
    built = {q.metadata["task_id"] for q in faulted.queries}
    assert built and not named & built
    assert named == {e.task_id for e in report.excluded}  # excluded, and why
    assert not is_clean_build(folder)

    own_sandbox.doomed_until = 0
    calls = own_sandbox.calls
    rebuilt = load()
    assert own_sandbox.calls > calls, "an unclean build must be rebuilt, not reused"
    rebuilt_report = read_build_report(rebuilt)
    assert rebuilt_report is not None and rebuilt_report.clean is True
    assert is_clean_build(folder)
    calls = own_sandbox.calls
    load()
    assert own_sandbox.calls == calls  # a clean build is reused
    own_sandbox.close()


@pytest.fixture
def small_builtin(gate: Gate, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Four built-in tasks standing in for the built-in pool (built by the real builder)."""
    pool, report = build_pool(small_tasks(4), gate, seed=0)
    folder = write_built_pool(pool, report, tmp_path / "small-builtin")
    monkeypatch.setattr(builtin, "DATA_DIR", folder)


def eval_with(
    monkeypatch: pytest.MonkeyPatch,
    out: Path,
    every: int = 0,
    doomed_until: int = 0,
    doomed_from: int = 1,
) -> tuple[int, str, dict[str, Any]]:
    """``guardrail eval`` (BM25, two gate settings) on its own sandbox, killed every N runs or
    doomed for its runs ``doomed_from`` to ``doomed_until``."""

    def own_gate(  # the signature of guardrail.cli.options.build_gate
        *,
        image: str | None,
        timeout: float,
        no_cache: bool,
        runtime: str | None = None,
        backend: str | None = None,
        ray_address: str | None = None,
    ) -> Gate:
        sandbox = KillingSandbox(
            image=image,
            pool_size=2,
            timeout_s=TIMEOUT_S,
            every=every,
            doomed_until=doomed_until,
            doomed_from=doomed_from,
        )
        return Gate(sandbox, cache=False)

    monkeypatch.setattr(eval_cli, "build_gate", own_gate)
    arguments = ["--system", "bm25", "--visible-tests", "1", "--draws", "1", "--questions", "0"]
    result = runner.invoke(app, ["eval", *arguments, "--out", str(out)])
    assert (out / "summary.json").is_file(), (result.output, result.exception)
    return result.exit_code, result.output, json.loads((out / "summary.json").read_text())


def numbers(summary: dict[str, Any]) -> list[object]:
    return [(arm["name"], arm["metrics"], arm["agent"]) for arm in summary["arms"]]


@pytest.mark.docker
def test_eval_under_kills_gives_the_clean_numbers_or_exits_4_naming_the_faults(
    small_builtin: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path, quick_blame: None
) -> None:
    code, output, clean = eval_with(monkeypatch, tmp_path / "clean")
    assert code == 0, output
    # Nothing killed, so nothing is left; a loaded machine may starve a timeout, which is
    # retried with more patience (counted in "retried") and settles.
    left = {key: value for key, value in clean["faults"].items() if key != "retried"}
    assert left == {"remaining": 0, "items": [], "pool_build": None}

    # Kills between runs: the sandbox replays what the dead containers had not finished.
    code, output, killed = eval_with(monkeypatch, tmp_path / "killed", every=3)
    assert code == 0, output
    assert killed["faults"]["remaining"] == 0
    assert numbers(killed) == numbers(clean)

    # The pool's label check (one run of its 20 pairs) and both its retries (runs 1 to 3) are
    # doomed: its faults are listed like the run's own, never taken for wrong labels.
    code, output, always = eval_with(monkeypatch, tmp_path / "always", doomed_until=3)
    assert code == 4, output
    faults = always["faults"]
    assert faults["remaining"] > 0
    first = faults["items"][0]
    assert (first["reason"], first["judged_by"]) == (SANDBOX_FAULT, "pool validation")
    assert f"{first['query_id']} {first['corpus_id']}" in output.replace("\n", " ")
    assert always["validation"]["relabelled"] == []
    assert "Results incomplete" in (tmp_path / "always" / "report.md").read_text()

    # The first gated query and both its retries (runs 2 to 4, after the label check) are doomed.
    code, output, gated = eval_with(monkeypatch, tmp_path / "gated", doomed_from=2, doomed_until=4)
    assert code == 4, output
    judged_by = {item["judged_by"] for item in gated["faults"]["items"]}
    assert "pool validation" not in judged_by and judged_by


@pytest.mark.docker
def test_a_missing_image_fails_with_exit_3_before_any_model_loads(
    docker_sandbox: object, tmp_path: Path
) -> None:
    script = (
        "import sys, time\n"
        "from typer.testing import CliRunner\n"
        "from guardrail.cli.app import app\n"
        "started = time.monotonic()\n"
        "result = CliRunner().invoke(app, ['eval'])\n"
        "took = time.monotonic() - started\n"
        "loaded = [m for m in ('sentence_transformers', 'torch') if m in sys.modules]\n"
        "print(result.exit_code, round(took, 1), ','.join(loaded) or '-')\n"
    )
    env = {
        **os.environ,
        "GUARDRAIL_IMAGE": "guardrail-sandbox:no-such-tag",
        "GUARDRAIL_CACHE_DIR": str(tmp_path / "cache"),
    }
    done = subprocess.run(
        [sys.executable, "-c", script],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    code, took, loaded = done.stdout.split()
    assert code == "3", done.stdout + done.stderr
    assert loaded == "-", f"loaded before the image check: {loaded}"
    assert float(took) < 60  # generous: the point is no indexing (10-18 s here) comes first


@pytest.mark.docker
def test_eval_on_a_pool_built_with_faults_exits_4_naming_the_build(
    gate: Gate, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    pool, report = build_pool(small_tasks(2), gate, seed=0)
    fault = BuildFault(task_id="planted_01", candidate="mutant", reason=STARVED_TIMEOUT)
    unclean = report.model_copy(update={"clean": False, "faults": [fault]})
    monkeypatch.setattr(builtin, "DATA_DIR", write_built_pool(pool, unclean, tmp_path / "pool"))
    code, output, summary = eval_with(monkeypatch, tmp_path / "out")
    assert code == 4, output
    assert summary["faults"]["remaining"] == 0
    assert "planted_01 (mutant, starved_timeout)" in summary["faults"]["pool_build"]
    assert "planted_01" in output


def test_only_a_pool_recorded_as_clean_is_reused(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for name in ("corpus.jsonl", "queries.jsonl"):
        (data / name).write_text("")
    assert not is_clean_build(tmp_path)  # no build report: half-written or not ours
    report = json.loads((builtin.DATA_DIR / "build_report.json").read_text())
    for clean, reused in ((None, False), (False, False), (True, True)):
        recorded = {key: value for key, value in report.items() if key != "clean"}
        if clean is not None:  # None: a report from before provenance was recorded
            recorded["clean"] = clean
        (data / "build_report.json").write_text(json.dumps(recorded))
        assert is_clean_build(tmp_path) is reused, clean
