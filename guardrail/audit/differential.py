"""Differential runs: the members of each near-clone cluster called on the same inputs.

Inputs come from the same generator as the gate's questions (`guardrail.probes`): arguments of
each member's stored tests and doctest examples, type-aware mutations of them, values of the
annotated types; the union over a cluster's members, so an input one copy's author tested is
tried on every copy. Each member runs in the sandbox in its own module context (its snippet's
metadata, as ``guardrail verify --stored`` judges it), as `Gate.observe` runs probes (one job
per member, its probes as the judge's observing tests), and its stored tests run through
`Gate.verify`.

How each member is called and what its result becomes before it is compared (a method through
its own class, a coroutine run to completion, an iterator drained up to a bound) is
`guardrail.audit.calling`'s.

Two members diverge on an input when both gave a judgeable answer (a value, an exception, a
drained iterator) and the answers differ. ``unjudged`` (a timeout, a value that cannot cross the
sandbox boundary, a crash) never counts as a divergence: no finding without evidence. A pair
that could not be compared on a single input (a side that cannot be called, or whose every
result was unjudged) is a `NotCompared` with the reason, never a silent "same".
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from guardrail.audit.calling import (
    NOT_COMPARED,
    Callee,
    accepts,
    callee_of,
    observations,
    observing_spec,
    observing_test,
)
from guardrail.audit.clusters import ClonePair, Cluster
from guardrail.audit.findings import (
    TESTED_ORIGINS,
    Finding,
    NotCompared,
    Outcome,
    Place,
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
from guardrail.questions import Observation
from guardrail.settling import describe
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
    not_compared: list[NotCompared] = field(default_factory=list)
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
    callee: Callee | str  # how it is called, or why it cannot be (`calling.NOT_COMPARED`)


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
        for snippet in cluster.members:
            members.setdefault(snippet.index_id, _member(snippet))
        pairs = []
        for pair in cluster.pairs:
            why = _not_callable(members[pair.left], members[pair.right])
            if why is None:
                pairs.append(pair)
            else:
                _not_compared(result, pair, members, *why)
        wanted = {id_ for pair in pairs for id_ in (pair.left, pair.right)}
        runnable = [members[s.index_id] for s in cluster.members if s.index_id in wanted]
        probes = _cluster_probes(runnable, inputs, seed) if runnable else []
        if pairs and not probes:
            for pair in pairs:
                _not_compared(result, pair, members, "no-inputs", NOT_COMPARED["no-inputs"])
        elif pairs:
            plans.append((cluster, pairs, runnable, probes))
    planned = {id(m): m for _, _, runnable, _ in plans for m in runnable}
    tests = _stored_status(list(planned.values()), gate)
    result.sandbox_runs += sum(member.spec is not None for member in planned.values())
    observed = _observe_all(gate, plans, chunk, on_progress)
    for _, pairs, runnable, probes in plans:
        result.sandbox_runs += len(probes) * len(runnable)
        result.inputs_tried += len(probes)
        for pair in pairs:
            _judge_pair(result, pair, members, probes, observed=observed, tests=tests)
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
            assert isinstance(member.callee, Callee)  # planned members are callable
            tests = [observing_test(member.callee, probe) for probe in probes]
            observed[member.snippet.index_id] = observations(verdict, tests)
        if on_progress is not None:
            on_progress(start + len(batch), len(work))
    return observed


def _observing_spec(member: _Member, probes: Sequence[Probe]) -> Spec:
    """The member's probes as tests of its callee, with its stored tests' setup."""
    assert isinstance(member.callee, Callee)
    setup = member.spec.setup if member.spec is not None else ""
    return observing_spec(member.callee, list(probes), setup)


def _judge_pair(
    result: DifferentialResult,
    pair: ClonePair,
    members: dict[str, _Member],
    probes: Sequence[Probe],
    *,
    observed: dict[str, list[Observation]],
    tests: dict[str, TestStatus],
) -> None:
    """Compare one pair on the inputs both sides take: a finding, nothing, or not compared."""
    first, second = members[pair.left], members[pair.right]
    fitting = [i for i, probe in enumerate(probes) if _both_accept(first, second, probe)]
    if not fitting:
        why = "no input fits both signatures (they take different arguments)"
        _not_compared(result, pair, members, "signatures-differ", why)
        return
    one = [observed[pair.left][i] for i in fitting]
    two = [observed[pair.right][i] for i in fitting]
    unobserved = _unobserved(first, one, second, two)
    if unobserved is not None:
        _not_compared(result, pair, members, "not-observed", unobserved)
        return
    result.pairs_run += 1
    chosen = [probes[i] for i in fitting]
    finding = _compare(pair, first, second, probes=chosen, observed=(one, two), tests=tests)
    if finding is not None:
        result.findings.append(finding)


def _both_accept(first: _Member, second: _Member, probe: Probe) -> bool:
    return all(isinstance(m.callee, Callee) and accepts(m.callee, probe) for m in (first, second))


def _not_callable(first: _Member, second: _Member) -> tuple[str, str] | None:
    """``(category, reason)`` when a side of the pair cannot be called, else None."""
    for member in (first, second):
        if isinstance(member.callee, str):
            reason = NOT_COMPARED.get(member.callee, member.callee)
            return member.callee, f"{member.snippet.qualified_name or member.name} is {reason}"
    return None


def _unobserved(
    first: _Member, one: Sequence[Observation], second: _Member, two: Sequence[Observation]
) -> str | None:
    """Why the two sides were compared on no input at all (None when they were on one)."""
    if any(a.judged and b.judged for a, b in zip(one, two, strict=True)):
        return None
    reasons = []
    for member, seen in ((first, one), (second, two)):
        whys = Counter(o.text for o in seen if not o.judged)
        if whys:
            why, times = whys.most_common(1)[0]
            name = member.snippet.qualified_name or member.name
            unjudged = sum(whys.values())
            reasons.append(
                f"{name}: no result could be compared on {unjudged} of {len(seen)} inputs"
                f" ({times} times: {why})"
            )
    return "; ".join(reasons) or "no input was judged on both sides"


def _not_compared(
    result: DifferentialResult,
    pair: ClonePair,
    members: dict[str, _Member],
    category: str,
    reason: str,
) -> None:
    result.pairs_not_run[category] += 1
    result.not_compared.append(
        NotCompared(
            left=_place(members[pair.left].snippet, members[pair.left].name),
            right=_place(members[pair.right].snippet, members[pair.right].name),
            category=category,
            reason=reason,
            token_similarity=pair.token_similarity,
            embedding_similarity=pair.embedding_similarity,
        )
    )


def _member(snippet: Snippet) -> _Member:
    candidate = snippet_candidate(snippet)
    name = snippet.entry_point or snippet.qualified_name
    callee = callee_of(snippet.code, snippet.qualified_name, name)
    return _Member(snippet, candidate, name, resolve(candidate).spec, callee)


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
    """The member's stored tests as calls of the name inputs are generated for."""
    assert isinstance(member.callee, Callee)
    if member.spec is None:
        return Spec.build((), member.callee.name)
    return Spec.build(member.spec.tests, member.callee.name, member.spec.setup)


def _cluster_probes(members: Sequence[_Member], limit: int, seed: int) -> list[Probe]:
    """The union of every member's inputs (tested ones first), at most ``limit``."""
    codes = [m.callee.signature_code for m in members if isinstance(m.callee, Callee)]
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
    observed: tuple[Sequence[Observation], Sequence[Observation]],
    tests: dict[str, TestStatus],
) -> Finding | None:
    one, two = observed
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


def _place(snippet: Snippet, name: str) -> Place:
    return Place(
        id=snippet.index_id,
        file=snippet.file,
        root=snippet.root,
        module=snippet.module,
        qualified_name=snippet.qualified_name or name,
        line=snippet.start_line,
        end_line=snippet.end_line,
    )


def _site(member: _Member, observation: Observation, tests: dict[str, TestStatus]) -> Site:
    kind, text = describe(observation)
    place = _place(member.snippet, member.name)
    return Site(
        **place.model_dump(),
        tests=tests.get(member.snippet.index_id, "none"),
        output=Outcome(kind=kind, text=text),
    )
