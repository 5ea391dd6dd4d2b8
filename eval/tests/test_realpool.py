"""``guardrail eval build-pool --from PATH``: a real code tree -> a pool judged in module context.

The fixture package is written by the test: a module with two doctested functions (one calls a
module helper, so it only verifies inside its module), an undocumented near-clone and the
helper itself.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

import guardrail.sandbox.replay as replay
import guardrail_eval.cli as eval_cli
from guardrail.cli.app import app
from guardrail.gate import Gate
from guardrail.roots import trusted_root
from guardrail.verdict import Reason, Status
from guardrail_eval.arms import ArmKind
from guardrail_eval.errors import PoolFormatError
from guardrail_eval.pool import load_pool
from guardrail_eval.poolcontext import candidate_metadata, module_text
from guardrail_eval.realpool import NATURAL, build_real_pool, opaque_id, summary_line
from guardrail_eval.runner import EvalSettings, run_eval
from guardrail_eval.stripping import strip_examples
from guardrail_eval.systems import BM25System

runner = CliRunner()

OPS = '''\
"""Two doctested functions, a near-clone without doctests and a helper."""

_STEP = 1


def _add(value, by):
    return value + by


def clamp(value, low, high):
    """Clamp *value* into the closed range [low, high].

    >>> clamp(5, 0, 10)
    5
    >>> clamp(-3, 0, 10)
    0
    >>> clamp(42, 0, 10)
    10
    """
    if value < low:
        return low
    if value > high:
        return high
    return value


def clamp_open(value, low, high):
    if value <= low:
        return low
    if value >= high:
        return high
    return value


def shifted(values, by=_STEP):
    """Each non-negative value plus *by*, through the module's helper.

    >>> shifted([0, 1])
    [1, 2]
    >>> shifted([5], by=0)
    [5]
    >>> shifted([-1, 2])
    [3]
    """
    return [_add(v, by) for v in values if v >= 0]
'''


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Context trees are materialized under the test's own cache folder."""
    monkeypatch.setenv("GUARDRAIL_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    (root / "minipkg").mkdir(parents=True)
    (root / "minipkg" / "__init__.py").write_text('"""A package written by the test."""\n')
    (root / "minipkg" / "ops.py").write_text(OPS)
    (root / "setup_notes.txt").write_text("not Python: never copied\n")
    return root


@pytest.mark.docker
def test_a_tree_becomes_queries_verified_mutants_and_shipped_context(
    tree: Path, gate: Gate, tmp_path: Path
) -> None:
    out = tmp_path / "pool"
    pool, report = build_real_pool([tree], gate, out)

    assert [q.query_id for q in pool.queries] == ["q:minipkg.ops:clamp", "q:minipkg.ops:shifted"]
    clamp = pool.queries[0]
    assert clamp.query == "Clamp *value* into the closed range [low, high]."
    assert clamp.entry_point == "clamp" and len(clamp.test_suite) == 3
    assert clamp.test_suite[0] == "__doctest_example__('clamp(5, 0, 10)', '5')"
    assert clamp.correct_corpus_ids == [opaque_id(0, "minipkg.ops:clamp")]
    # Every other function is in the corpus, unchanged, as a natural distractor.
    naturals = {
        e.context and e.context.qualified_name
        for e in pool.corpus.values()
        if e.bug_type == NATURAL
    }
    assert naturals == {"_add", "clamp_open"}
    clamp_open = pool.corpus[opaque_id(0, "minipkg.ops:clamp_open")]
    assert clamp_open.label == "incorrect"
    assert "def clamp_open(value, low, high):" in clamp_open.code
    # Ids are opaque and in id order: neither shape nor order tells a canonical or a mutant.
    assert list(pool.corpus) == sorted(pool.corpus)
    assert all(re.fullmatch(r"r_[0-9a-f]{16}", cid) for cid in pool.corpus)
    # Paired distractors are mutants of their canonical, each in a fork of the codebase of its
    # own: the same module and name, another tree.
    codebase = {
        e.context and e.context.tree for e in pool.corpus.values() if e.bug_type in (None, NATURAL)
    }
    assert len(codebase) == 1 and None not in codebase
    forks: set[str | None] = set()
    for query in pool.queries:
        assert query.paired_distractor_corpus_ids == sorted(query.paired_distractor_corpus_ids)
        home = pool.canonical(query).context
        assert home is not None and "tree" not in query.metadata  # no tree tells it
        for cid in query.paired_distractor_corpus_ids:
            fork = pool.corpus[cid].context
            assert pool.corpus[cid].bug_type not in (None, NATURAL)
            assert fork is not None and fork.tree not in codebase
            assert fork.model_copy(update={"tree": home.tree}) == home
            forks.add(fork.tree)
    mutants = sum(len(q.paired_distractor_corpus_ids) for q in pool.queries)
    assert len(forks) == mutants
    assert report.clean is True and report.queries == 2
    # The shortcut baselines over each family are recorded: with opaque ids, the examples
    # removed and every mutant in a module of its own, the id's shape, the docstring and the
    # text found in its module are worth chance, no more.
    assert report.shortcuts is not None and report.shortcuts.n_queries == 2
    chance = sum(1 / (1 + len(q.paired_distractor_corpus_ids)) for q in pool.queries) / 2
    assert report.shortcuts.chance == pytest.approx(chance, abs=1e-4)
    for picker in ("id-shape", "docstring", "verbatim-in-context", "name-then-verbatim"):
        assert report.shortcuts.exec_at_1[picker] == pytest.approx(chance, abs=1e-4), picker

    # The files are what the loader reads; the context holds the trees, content-addressed.
    loaded = load_pool(out)
    assert sorted(loaded.corpus) == sorted(pool.corpus)
    context = out / "context"
    assert sorted(p.name for p in context.iterdir()) == ["objects", "trees"]
    assert len(list((context / "trees").iterdir())) == 1 + mutants
    # one object per file of the codebase, one per fork's changed module
    assert len(list((context / "objects").iterdir())) == 2 + mutants
    # Each entry's module, as shipped, holds its own text as the definition ...
    for entry in loaded.corpus.values():
        text = module_text(loaded, entry)
        assert text is not None and entry.code.strip() in text, entry.corpus_id
    # ... with the docstrings' examples (the hidden tests) removed, there and from every snippet.
    assert module_text(loaded, loaded.canonical(clamp)) == strip_examples(OPS)
    # Each tree is judged from a real folder: the codebase as staged, or a fork of it.
    root = Path(candidate_metadata(loaded, loaded.canonical(clamp))["root"])
    shipped = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
    assert shipped == ["minipkg", "minipkg/__init__.py", "minipkg/ops.py"]
    assert trusted_root(root) == root and not any(p.is_symlink() for p in root.rglob("*"))
    assert root.is_relative_to(tmp_path / "cache" / "pools" / "trees")
    assert ">>>" not in strip_examples(OPS) and "Clamp *value* into" in strip_examples(OPS)
    assert not [cid for cid, entry in loaded.corpus.items() if ">>>" in entry.code]
    assert not [p for p in out.iterdir() if p.name.startswith(".")]  # no staging left behind

    # Judged again from the written pool, in module context: canonicals pass their whole suite,
    # every mutant fails it.
    for query in loaded.queries:
        spec = loaded.spec(query)
        ids = [*query.correct_corpus_ids, *query.paired_distractor_corpus_ids]
        entries = [loaded.corpus[cid] for cid in ids]
        metadata = [candidate_metadata(loaded, entry) for entry in entries]
        verdicts = gate.verify([e.code for e in entries], spec, metadata=metadata)
        assert verdicts[0].status is Status.VERIFIED, (query.query_id, verdicts[0])
        assert all(v.status is Status.FAILED and v.passed_tests for v in verdicts[1:])


@pytest.mark.docker
def test_the_canonical_verifies_only_with_its_shipped_context(
    tree: Path, gate: Gate, tmp_path: Path
) -> None:
    build_real_pool([tree], gate, tmp_path / "pool")
    pool = load_pool(tmp_path / "pool")
    query = next(q for q in pool.queries if q.entry_point == "shifted")
    canonical = pool.canonical(query)
    metadata = candidate_metadata(pool, canonical)
    assert canonical.context is not None and canonical.context.tree is not None
    assert metadata == {
        "file": "minipkg/ops.py",
        "module": "minipkg.ops",
        "qualified_name": "shifted",
        "root": str(tmp_path / "cache" / "pools" / "trees" / canonical.context.tree),
    }
    spec = pool.spec(query)
    with_context, alone = gate.verify(
        [canonical.code, canonical.code], spec, metadata=[metadata, None]
    )
    assert with_context.status is Status.VERIFIED
    assert alone.status is Status.UNVERIFIABLE and alone.reason is Reason.MISSING_CONTEXT


@pytest.mark.docker
def test_the_eval_judges_a_real_pool_in_module_context(
    tree: Path, gate: Gate, tmp_path: Path
) -> None:
    build_real_pool([tree], gate, tmp_path / "pool")
    pool = load_pool(tmp_path / "pool")
    run = run_eval(pool, [BM25System(seed=0)], gate, EvalSettings(visible_tests=(1,), draws=1))
    (system,) = run.systems
    query_mutants = {q.query_id: set(q.paired_distractor_corpus_ids) for q in pool.queries}
    for arm in system.arms:
        for outcome in arm.outcomes:
            truth = {item.corpus_id: item.passes_all_tests for item in outcome.items}
            canonical = outcome.query.correct_corpus_ids[0]
            assert truth.get(canonical, True), (arm.name, outcome.query.query_id)
            mutants = query_mutants[outcome.query.query_id]
            assert not any(v for cid, v in truth.items() if cid in mutants)  # never pass
    (upper_bound,) = [arm for arm in system.arms if arm.kind is ArmKind.UPPER_BOUND]
    assert all(o.items and o.items[0].passes_all_tests for o in upper_bound.outcomes)


TALLY = '''\
"""A running total kept in module state: its examples depend on each other unseen."""

_seen = []


def tally(x):
    """Add *x* to the running total and return it, never below 0.

    >>> tally(2)
    2
    >>> tally(3)
    5
    >>> tally(-5)
    0
    """
    _seen.append(x)
    return max(sum(_seen), 0)
'''


@pytest.mark.docker
def test_the_pool_keeps_only_the_visible_units_its_canonical_passes_alone(
    gate: Gate, tmp_path: Path
) -> None:
    root = tmp_path / "src"
    root.mkdir()
    (root / "tally.py").write_text(TALLY)
    build_real_pool([root], gate, tmp_path / "pool")
    (query,) = load_pool(tmp_path / "pool").queries
    # Alone, tally(3) answers 3: only the first and the last example are draws the correct
    # function passes, and only they are stored.
    assert query.test_units == [[0], [2]]
    assert len(query.test_suite) == 3 and query.paired_distractor_corpus_ids


@pytest.mark.docker
def test_the_same_tree_and_seed_give_byte_identical_files(
    tree: Path, gate: Gate, tmp_path: Path
) -> None:
    first, second = tmp_path / "one", tmp_path / "two"
    build_real_pool([tree], gate, first, seed=3)
    build_real_pool([tree], Gate(gate.sandbox, cache=False), second, seed=3)
    files = sorted(
        p.relative_to(first).as_posix()
        for p in first.rglob("*")
        if p.is_file() and p.name != "build_report.json"
    )
    assert "data/corpus.jsonl" in files and "data/distractor_metadata.jsonl" in files
    for name in files:
        assert (first / name).read_bytes() == (second / name).read_bytes(), name


def test_a_bad_path_exits_2_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nowhere"
    result = runner.invoke(app, ["eval", "build-pool", "--from", str(missing)])
    assert result.exit_code == 2
    assert f"--from {missing}: no such folder" in result.output
    both = runner.invoke(app, ["eval", "build-pool", "builtin", "--from", str(tmp_path)])
    assert both.exit_code == 2 and "not both" in both.output
    pin = runner.invoke(app, ["eval", "build-pool", "--from-sdist", "toolz>=1"])
    assert pin.exit_code == 2 and "not an exact pin NAME==VERSION" in pin.output


def test_a_context_outside_the_context_folder_is_refused_with_file_and_line(
    tmp_path: Path,
) -> None:
    row = {"corpus_id": "c1", "code": "def f():\n    return 1\n", "label": "correct"}
    query = {"query_id": "q1", "query": "one", "test_suite": ["assert f() == 1"]}
    query |= {"correct_corpus_ids": ["c1"], "paired_distractor_corpus_ids": []}
    bad = {**row, "corpus_id": "c2", "context": {"file": "../../etc/passwd.py", "module": "passwd"}}
    (tmp_path / "corpus.jsonl").write_text(json.dumps(row) + "\n" + json.dumps(bad) + "\n")
    (tmp_path / "queries.jsonl").write_text(json.dumps(query) + "\n")
    with pytest.raises(PoolFormatError, match=r"corpus.jsonl:2: context.file"):
        load_pool(tmp_path)


def test_the_summary_line_is_prose_never_an_example() -> None:
    assert summary_line("\n  Sum the values.\n\n  >>> f(1)\n  1\n") == "Sum the values."
    assert summary_line(">>> f(1)\n1\n") is None
    capped = summary_line("x" * 400)
    assert capped is not None and len(capped) == 300 and capped.endswith("...")


@pytest.mark.docker
def test_faults_left_after_the_retries_exit_4_with_an_unclean_pool_written(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, docker_sandbox: object
) -> None:
    from test_faults import TIMEOUT_S, KillingSandbox

    monkeypatch.setattr(replay, "BLAME_AFTER", 1)  # blame a job after one death alone
    # One container at a time: the doomed starts of the canonicals' call and of both its
    # retries are those of the first canonical alone, which is blamed; the other verifies.
    sandbox = KillingSandbox(pool_size=1, timeout_s=TIMEOUT_S, doomed_starts=2, doomed_until=3)

    def own_gate(  # the signature of guardrail.cli.options.build_gate
        *,
        image: str | None,
        timeout: float,
        no_cache: bool,
        runtime: str | None = None,
        backend: str | None = None,
        ray_address: str | None = None,
    ) -> Gate:
        return Gate(sandbox, cache=False)

    monkeypatch.setattr(eval_cli, "build_gate", own_gate)
    out = tmp_path / "pool"
    result = runner.invoke(app, ["eval", "build-pool", "--from", str(tree), "--out", str(out)])
    assert result.exit_code == 4, result.output
    assert "minipkg.ops:clamp (canonical, sandbox_fault)" in result.output
    report = json.loads((out / "data" / "build_report.json").read_text())
    assert report["clean"] is False
    assert [q.query_id for q in load_pool(out).queries] == ["q:minipkg.ops:shifted"]


def test_a_context_file_missing_from_the_pool_is_refused_at_load(tmp_path: Path) -> None:
    data = tmp_path / "pool" / "data"
    data.mkdir(parents=True)
    context = {"file": "pkg/mod.py", "module": "pkg.mod", "qualified_name": "f"}
    row = {"corpus_id": "c1", "code": "def f():\n    return 1\n", "label": "correct"}
    query = {"query_id": "q1", "query": "one", "test_suite": ["assert f() == 1"]}
    query |= {"correct_corpus_ids": ["c1"], "paired_distractor_corpus_ids": []}
    (data / "corpus.jsonl").write_text(json.dumps({**row, "context": context}) + "\n")
    (data / "queries.jsonl").write_text(json.dumps(query) + "\n")
    with pytest.raises(PoolFormatError, match=r"corpus.jsonl:1: context.file: no such file"):
        load_pool(tmp_path / "pool")
    (tmp_path / "pool" / "context" / "pkg").mkdir(parents=True)
    (tmp_path / "pool" / "context" / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    pool = load_pool(tmp_path / "pool")
    assert pool.corpus["c1"].context is not None
    assert candidate_metadata(pool, pool.corpus["c1"])["root"] == str(tmp_path / "pool/context")


def test_staging_a_tree_copies_no_link_and_no_host_file(
    hostile_tree: Path, tmp_path: Path, host_file_text: str
) -> None:
    """A pool is built from the files `guardrail index` reads, as read: links are left out."""
    from guardrail_eval.realtree import stage_tree

    staging = tmp_path / "staging"
    staged = stage_tree([hostile_tree], staging)

    assert "treepkg/good.py" in staged.files
    assert not {"treepkg/secret.py", "treepkg/inlink.py", "treepkg/zero.py"} & set(staged.files)
    assert any("secret.py: a symbolic link" in note for note in staged.notes)
    copied = [path for path in staging.rglob("*") if path.is_file()]
    assert not any(path.is_symlink() for path in staging.rglob("*"))
    assert not any(host_file_text in path.read_text(errors="replace") for path in copied)


def test_a_context_file_that_is_a_link_is_refused_at_load(tmp_path: Path) -> None:
    data = tmp_path / "pool" / "data"
    data.mkdir(parents=True)
    context = {"file": "pkg/mod.py", "module": "pkg.mod", "qualified_name": "f"}
    row = {"corpus_id": "c1", "code": "def f():\n    return 1\n", "label": "correct"}
    query = {"query_id": "q1", "query": "one", "test_suite": ["assert f() == 1"]}
    query |= {"correct_corpus_ids": ["c1"], "paired_distractor_corpus_ids": []}
    (data / "corpus.jsonl").write_text(json.dumps({**row, "context": context}) + "\n")
    (data / "queries.jsonl").write_text(json.dumps(query) + "\n")
    (tmp_path / "host.py").write_text("def f():\n    return 1\n")
    (tmp_path / "pool" / "context" / "pkg").mkdir(parents=True)
    (tmp_path / "pool" / "context" / "pkg" / "mod.py").symlink_to(tmp_path / "host.py")
    with pytest.raises(PoolFormatError, match=r"corpus.jsonl:1: context.file: no such file"):
        load_pool(tmp_path / "pool")


def test_a_context_folder_that_is_a_link_is_refused_at_load(tmp_path: Path) -> None:
    """A pool's ``context`` linked to a host folder: nothing of it becomes a context root."""
    data = tmp_path / "pool" / "data"
    data.mkdir(parents=True)
    context = {"file": "pkg/mod.py", "module": "pkg.mod", "qualified_name": "f"}
    row = {"corpus_id": "c1", "code": "def f():\n    return 1\n", "label": "correct"}
    query = {"query_id": "q1", "query": "one", "test_suite": ["assert f() == 1"]}
    query |= {"correct_corpus_ids": ["c1"], "paired_distractor_corpus_ids": []}
    (data / "corpus.jsonl").write_text(json.dumps({**row, "context": context}) + "\n")
    (data / "queries.jsonl").write_text(json.dumps(query) + "\n")
    host = tmp_path / "host"
    (host / "pkg").mkdir(parents=True)
    (host / "pkg" / "mod.py").write_text("def f():\n    return 1\n")
    (tmp_path / "pool" / "context").symlink_to(host)
    with pytest.raises(PoolFormatError, match=r"corpus.jsonl:1: context.file: no such file"):
        load_pool(tmp_path / "pool")
    assert trusted_root(host) is None


BOXES = '''\
"""A factory over a class: the factory's examples run the class's methods too."""


class Box:
    def __init__(self, value):
        self.value = value


def boxed(value, times=1):
    """Box *value*, repeated *times*.

    >>> boxed(3).value
    3
    >>> boxed(2, times=3).value
    6
    """
    return Box(value * times)
'''


@pytest.mark.docker
def test_ground_truth_credits_only_the_definition_the_tests_call(
    gate: Gate, tmp_path: Path
) -> None:
    """In its module, ``Box.__init__`` passes ``boxed``'s tests (they call the module's own
    ``boxed``, which runs it): the gate may verify it, but it is not what the query asks for."""
    from guardrail_eval.truth import Judge, Specs

    root = tmp_path / "src"
    (root / "boxes").mkdir(parents=True)
    (root / "boxes" / "__init__.py").write_text("")
    (root / "boxes" / "core.py").write_text(BOXES)
    build_real_pool([root], gate, tmp_path / "pool")
    pool = load_pool(tmp_path / "pool")
    (query,) = pool.queries
    init = next(
        c
        for c, e in pool.corpus.items()
        if e.context and e.context.qualified_name == "Box.__init__"
    )
    canonical, mutant = query.correct_corpus_ids[0], query.paired_distractor_corpus_ids[0]
    judge = Judge(gate, Specs(pool, EvalSettings(visible_tests=(1,), draws=1)))
    judge.judge_all([(query, init), (query, canonical), (query, mutant)], lambda *_: None)

    entry = pool.corpus[init]  # run in its module, it passes the whole suite...
    (raw,) = gate.verify([entry.code], pool.spec(query), metadata=[candidate_metadata(pool, entry)])
    assert raw.status is Status.VERIFIED, raw
    bound = judge.truth(query, init)
    assert bound.status is Status.ERROR and bound.reason is Reason.MISSING_ENTRY_POINT
    assert "the tests call boxed" in bound.message and "Box.__init__" in bound.message
    assert judge.truth(query, canonical).verified  # the definition the tests call: credited
    assert not judge.truth(query, mutant).verified
