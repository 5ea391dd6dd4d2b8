"""Differential runs: the members of each near-clone cluster called on the same inputs.

Inputs come from the same generator as the gate's questions (`guardrail.probes`): arguments of
each member's stored tests and doctest examples, type-aware mutations of them, values of the
annotated types; the union over a cluster's members, so an input one copy's author tested is
tried on every copy. Each member runs in the sandbox in its own module context (its snippet's
metadata, as ``guardrail verify --stored`` judges it), as `Gate.observe` runs probes (one job
per member, its probes as the judge's observing tests), and its stored tests run through
`Gate.verify`.

Two members diverge on an input when both gave a judgeable answer (a value or an exception)
and the answers differ. ``unjudged`` (a timeout, a value that cannot cross the sandbox
boundary, a crash) never counts as a divergence: no finding without evidence.

Only module-level functions are run: a method needs an instance the generated inputs do not
build, and an ``async def`` returns a coroutine; such pairs are counted, not run.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from guardrail.audit.clusters import ClonePair, Cluster
from guardrail.audit.findings import (
    TESTED_ORIGINS,
    Finding,
    Outcome,
    ProbeInput,
    Rule,
    Site,
    TestStatus,
    fingerprint,
    grade,
)
from guardrail.gate import Candidate, Gate
from guardrail.index.snippet import Snippet
from guardrail.index.stored import snippet_candidate
from guardrail.probes import Probe, generate_probes
from guardrail.questions import Observation, observations_of
from guardrail.sources import resolve
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict

__all__ = ["DifferentialResult", "run_differential"]

DEFAULT_INPUTS = 40  # inputs per cluster, as many as the gate's questions try
DEFAULT_CHUNK = 32  # members per sandbox batch: spreads over the pool, bounds memory


@dataclass
class DifferentialResult:
    """Findings and the counts of what ran."""

    findings: list[Finding] = field(default_factory=list)
    pairs_run: int = 0
    pairs_not_run: Counter[str] = field(default_factory=Counter)
    sandbox_runs: int = 0
    inputs_tried: int = 0


@dataclass(frozen=True)
class _Member:
    snippet: Snippet
    candidate: Candidate
    name: str
    spec: Spec | None  # its stored tests


def run_differential(
    clusters: Sequence[Cluster],
    gate: Gate,
    *,
    inputs: int = DEFAULT_INPUTS,
    seed: int = 0,
    chunk: int = DEFAULT_CHUNK,
    on_progress: Callable[[int, int], None] | None = None,
) -> DifferentialResult:
    """Run every cluster's runnable members on shared inputs; a finding per diverging pair.

    ``on_progress(done, total)`` counts members run.

    Raises:
        SandboxError: the sandbox cannot run anything.
        SpecError: a snippet's stored tests cannot be used (a collection written by hand).
    """
    result = DifferentialResult()
    plans: list[tuple[Cluster, list[ClonePair], list[_Member], list[Probe]]] = []
    members: dict[str, _Member] = {}
    for cluster in clusters:
        by_id = {snippet.index_id: snippet for snippet in cluster.members}
        pairs = []
        for pair in cluster.pairs:
            why = _not_runnable(by_id[pair.left]) or _not_runnable(by_id[pair.right])
            if why is None:
                pairs.append(pair)
            else:
                result.pairs_not_run[why] += 1
        wanted = {id_ for pair in pairs for id_ in (pair.left, pair.right)}
        runnable = [
            members.setdefault(s.index_id, _member(s))
            for s in cluster.members
            if s.index_id in wanted
        ]
        probes = _cluster_probes(runnable, inputs, seed) if runnable else []
        if pairs and not probes:
            result.pairs_not_run["no-inputs"] += len(pairs)
        elif pairs:
            plans.append((cluster, pairs, runnable, probes))
    tests = _stored_status(list(members.values()), gate)
    result.sandbox_runs += sum(member.spec is not None for member in members.values())
    observed = _observe_all(gate, plans, chunk, on_progress)
    for _, pairs, runnable, probes in plans:
        result.sandbox_runs += len(probes) * len(runnable)
        result.inputs_tried += len(probes)
        for pair in pairs:
            result.pairs_run += 1
            finding = _compare(
                pair,
                members[pair.left],
                members[pair.right],
                probes=probes,
                observed=observed,
                tests=tests,
            )
            if finding is not None:
                result.findings.append(finding)
    return result


def _observe_all(
    gate: Gate,
    plans: Sequence[tuple[Cluster, list[ClonePair], list[_Member], list[Probe]]],
    chunk: int,
    on_progress: Callable[[int, int], None] | None,
) -> dict[str, list[Observation]]:
    """Every planned member on its cluster's probes, ``chunk`` members per `Gate.verify` call.

    This is `Gate.observe` with one spec per member (each calls its own name): one batch
    spreads over the sandbox's container pool, where one `Gate.observe` call per member would
    run them one at a time. (Threads are no way out: CPython 3.11's ``ast.parse`` is not
    thread-safe, "AST constructor recursion depth mismatch".)
    """
    work = [(member, probes) for _, _, runnable, probes in plans for member in runnable]
    observed: dict[str, list[Observation]] = {}
    for start in range(0, len(work), chunk):
        batch = work[start : start + chunk]
        verdicts = gate.verify(
            [member.candidate.code for member, _ in batch],
            [_observing_spec(member, probes) for member, probes in batch],
            metadata=[member.candidate.metadata for member, _ in batch],  # in its module
        )
        for (member, probes), verdict in zip(batch, verdicts, strict=True):
            observed[member.snippet.index_id] = observations_of(verdict, _own(member, probes))
        if on_progress is not None:
            on_progress(start + len(batch), len(work))
    return observed


def _own(member: _Member, probes: Sequence[Probe]) -> list[Probe]:
    return [probe.model_copy(update={"entry_point": member.name}) for probe in probes]


def _observing_spec(member: _Member, probes: Sequence[Probe]) -> Spec:
    """The member's probes as tests of its own name, with its stored tests' setup."""
    setup = member.spec.setup if member.spec is not None else ""
    return Spec.build([probe.test for probe in _own(member, probes)], member.name, setup)


def _not_runnable(snippet: Snippet) -> str | None:
    """Why ``snippet`` cannot be called on generated inputs, or None when it can."""
    if "." in snippet.qualified_name:
        return "method"
    try:
        body = ast.parse(snippet.code).body
    except (SyntaxError, ValueError):
        return "does-not-parse"
    # A split snippet starts with the module imports it uses; its definition comes last.
    if not body or not all(isinstance(node, ast.Import | ast.ImportFrom) for node in body[:-1]):
        return "not-a-function"
    if isinstance(body[-1], ast.AsyncFunctionDef):
        return "async"
    return None if isinstance(body[-1], ast.FunctionDef) else "not-a-function"


def _member(snippet: Snippet) -> _Member:
    candidate = snippet_candidate(snippet)
    name = snippet.entry_point or snippet.qualified_name
    return _Member(snippet, candidate, name, resolve(candidate).spec)


def _stored_status(members: Sequence[_Member], gate: Gate) -> dict[str, TestStatus]:
    """Each member against its own stored tests, all in one batch."""
    verdicts = gate.verify(
        [m.candidate.code for m in members],
        [m.spec for m in members],
        metadata=[m.candidate.metadata for m in members],
    )
    return {m.snippet.index_id: _status(v) for m, v in zip(members, verdicts, strict=True)}


def _status(verdict: Verdict) -> TestStatus:
    if verdict.status is Status.VERIFIED:
        return "pass"
    if verdict.status in {Status.FAILED, Status.ERROR, Status.TIMEOUT}:
        return "fail"
    return "none" if verdict.reason is Reason.NO_TESTS else "unjudged"


def _probe_spec(member: _Member) -> Spec:
    return member.spec or Spec.build((), member.name)


def _cluster_probes(members: Sequence[_Member], limit: int, seed: int) -> list[Probe]:
    """The union of every member's inputs (tested ones first), at most ``limit``."""
    codes = [m.candidate.code for m in members]
    found: dict[tuple[tuple[str, ...], tuple[tuple[str, str], ...]], Probe] = {}
    for member in members:
        for probe in generate_probes(_probe_spec(member), codes, limit=limit, seed=seed):
            found.setdefault((probe.args, probe.kwargs), probe)
    ordered = sorted(found.values(), key=lambda p: p.origin not in TESTED_ORIGINS)  # stable
    return ordered[:limit]


def _compare(
    pair: ClonePair,
    first: _Member,
    second: _Member,
    *,
    probes: Sequence[Probe],
    observed: dict[str, list[Observation]],
    tests: dict[str, TestStatus],
) -> Finding | None:
    one, two = observed[first.snippet.index_id], observed[second.snippet.index_id]
    diverging = [
        i
        for i, (a, b) in enumerate(zip(one, two, strict=True))
        if a.kind != "unjudged" and b.kind != "unjudged" and a.key != b.key
    ]
    if not diverging:
        return None

    def preference(i: int) -> tuple[bool, bool, int]:
        # Tested inputs first, then two values (more telling than an exception), then order.
        kinds = {one[i].kind, two[i].kind}
        return (probes[i].origin not in TESTED_ORIGINS, kinds != {"value"}, i)

    best = min(diverging, key=preference)
    left = _site(first, one[best], tests)
    right = _site(second, two[best], tests)
    if right.tests == "pass" and left.tests != "pass":
        left, right = right, left  # the side that passes its tests is the reference
    probe = probes[best]
    rule = (
        Rule.DIVERGES_ON_TESTED_INPUT
        if probe.origin in TESTED_ORIGINS
        else Rule.DIVERGES_ON_GENERATED_INPUT
    )
    return Finding(
        rule=rule,
        severity=grade(probe.origin, left, right),
        fingerprint=fingerprint(rule, left, right),
        left=left,
        right=right,
        token_similarity=pair.token_similarity,
        embedding_similarity=pair.embedding_similarity,
        input=ProbeInput(args=probe.args, kwargs=dict(probe.kwargs), origin=probe.origin),
        diverging_inputs=len(diverging),
        inputs_tried=len(probes),
    )


def _site(member: _Member, observation: Observation, tests: dict[str, TestStatus]) -> Site:
    snippet = member.snippet
    return Site(
        id=snippet.index_id,
        file=snippet.file,
        root=snippet.root,
        module=snippet.module,
        qualified_name=snippet.qualified_name or member.name,
        line=snippet.start_line,
        end_line=snippet.end_line,
        tests=tests.get(snippet.index_id, "none"),
        output=Outcome(
            kind="raises" if observation.kind == "raises" else "value", text=observation.text
        ),
    )
