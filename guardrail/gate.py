"""`Gate`: verify retrieved candidates against tests, then order them by a policy.

The Gate is the one place verification is orchestrated: the CLI, the eval and the LangChain and
LlamaIndex integrations are thin layers over `Gate.verify` / `Gate.gate` (and their ``a``-prefixed
async twins, which share the implementation by running it in a worker thread).

Fail closed: candidates are judged only by the sandbox (or a verdict the same sandbox produced,
from the cache); a sandbox that cannot run raises `SandboxError`, it never yields ``verified``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from enum import StrEnum
from pathlib import Path
from types import TracebackType
from typing import Any, Self

from pydantic import BaseModel, ConfigDict, Field

from guardrail.cache import VerdictCache
from guardrail.context import ModuleReads
from guardrail.errors import SpecError
from guardrail.jobs import PreparedJob, prepare_job
from guardrail.precheck import precheck_verdict
from guardrail.probes import Probe, generate_probes
from guardrail.questions import Question, observations_of, pick_question
from guardrail.sandbox.base import Sandbox
from guardrail.settling import SETTLE_SETUP
from guardrail.spec import Spec
from guardrail.verdict import Observation, Reason, Status, Verdict

__all__ = [
    "Candidate",
    "Gate",
    "GateResult",
    "GatedCandidate",
    "Policy",
    "Probing",
    "apply_policy",
]


class Policy(StrEnum):
    """What the gate hands over.

    * ``rerank``  verified first (those verified under their own name before those verified
      through an alias, ``Verdict.alias``: binding a function under the tests' name is a
      weaker match), then candidates that had no tests (``unverifiable`` with nothing run),
      then those that could not be judged (``unverifiable`` with reason ``unserialisable``: a
      value could not cross the sandbox boundary; ``missing_context`` or ``missing_dependency``:
      the module or a package it needs could not be had; ``refused_facility``: it used IPC the
      sandbox refuses), each group in retrieval order;
      failed, error and timeout are dropped;
    * ``filter``  verified only (own name first, then aliases);
    * ``abstain`` verified, then candidates that had no tests, when anything verified; nothing
      at all otherwise;
    * ``agree``   as ``abstain``, but nothing at all when the verified candidates disagree on an
      input the gate generated (`GateResult.question`): with thin tests, two candidates that
      pass them and answer one input differently mean at least one of them is wrong, and
      nothing says which, so none is handed over and the question says what to test. Asking
      is part of this policy: a gate with ``ask=False`` still asks under ``agree``.

    Unjudgeable candidates rank last and ``filter``/``abstain`` never hand them over: any wrong
    candidate can make itself unjudgeable (return a custom object, raise NameError or
    ModuleNotFoundError on purpose), so having tests that could not judge it must never rank it
    like a candidate that simply had none.
    """

    RERANK = "rerank"
    FILTER = "filter"
    ABSTAIN = "abstain"
    AGREE = "agree"


class Candidate(BaseModel):
    """A retrieved code snippet; ``id``, ``score`` and ``metadata`` are carried through as is."""

    model_config = ConfigDict(frozen=True)

    code: str
    id: str = ""
    score: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class GatedCandidate(BaseModel):
    """A candidate with its verdict and its place in the retriever's ranking (0-based)."""

    model_config = ConfigDict(frozen=True)

    candidate: Candidate
    verdict: Verdict
    retrieval_rank: int


class Probing(BaseModel):
    """The verified candidates' answers on generated inputs (`Gate.probe_verified`).

    ``observations[c][p]`` is candidate ``c``'s (``candidates``, retrieval order) on probe ``p``.
    """

    model_config = ConfigDict(frozen=True)

    spec: Spec
    candidates: tuple[GatedCandidate, ...]
    probes: tuple[Probe, ...]
    observations: tuple[tuple[Observation, ...], ...]


class GateResult(BaseModel):
    """Everything the gate decided: every verdict in input order, what it hands over, and the
    question it asks when verified candidates disagree (`guardrail.questions`; None when it did
    not ask, or they agreed on every input it tried)."""

    model_config = ConfigDict(frozen=True)

    policy: Policy
    judged: tuple[GatedCandidate, ...]
    kept: tuple[GatedCandidate, ...]
    question: Question | None = None

    @property
    def abstained(self) -> bool:
        """True when the gate handed over nothing although there were candidates."""
        return bool(self.judged) and not self.kept


UNJUDGEABLE = frozenset(
    {
        Reason.UNSERIALISABLE,
        Reason.MISSING_CONTEXT,
        Reason.MISSING_DEPENDENCY,
        Reason.REFUSED_FACILITY,
    }
)
"""Reasons of ``unverifiable`` verdicts whose tests were meant to run but could not judge."""


def apply_policy(
    judged: Sequence[GatedCandidate], policy: Policy, question: Question | None = None
) -> list[GatedCandidate]:
    """Order and filter judged candidates; see `Policy`. Failed, error and timeout are dropped.
    ``question`` is the gate's about the verified candidates: under ``agree`` it withholds
    everything."""
    if policy is Policy.AGREE:
        if question is not None:
            return []
        policy = Policy.ABSTAIN
    by_rank = sorted(judged, key=lambda item: item.retrieval_rank)
    verified = [item for item in by_rank if item.verdict.status is Status.VERIFIED]
    verified.sort(key=lambda item: item.verdict.alias is not None)  # stable: rank order kept
    if policy is Policy.FILTER or (policy is Policy.ABSTAIN and not verified):
        return verified
    unverifiable = [item for item in by_rank if item.verdict.status is Status.UNVERIFIABLE]
    untested = [item for item in unverifiable if item.verdict.reason not in UNJUDGEABLE]
    if policy is Policy.ABSTAIN:
        return verified + untested
    unjudgeable = [item for item in unverifiable if item.verdict.reason in UNJUDGEABLE]
    return verified + untested + unjudgeable


SpecArg = Spec | Sequence[Spec | None] | None


DEFAULT_PROBE_LIMIT = 80
"""Inputs a Gate tries when it asks: on the built-in pool, 80 rather than 40 cut the silent-buggy
rate after one question from 7.1% to 4.3%, for 1.6x a run's median time
(bench/bench_questions.py)."""
_TIMEOUT_RETRIES = 3  # how often `Gate.observe` resumes a code's probes after a timeout


class Gate:
    """Verify candidates in a sandbox, reuse cached verdicts, apply a policy.

    Args:
        sandbox: where candidates run. Default: a `DockerSandbox` with its defaults.
        cache: a `VerdictCache`; the default is the user cache dir; ``False`` turns caching off.
        policy: the default policy of `gate`.
        context_root: where candidates' relative ``file`` metadata lives (default: each
            candidate's own ``root``); see `guardrail.context`.
        context_roots: host folders a candidate's stored ``root`` may name, besides those this
            process indexed or computed metadata for and ``$GUARDRAIL_CONTEXT_ROOTS``
            (`guardrail.roots`); a root outside all of them is never read (``missing_context``).
        ask: whether `gate` asks a question when two or more candidates are verified (it runs
            them on up to ``probe_limit`` generated inputs: one more sandbox job per verified
            candidate). It changes what is kept only under ``agree``, which always asks.
        probe_limit: how many inputs (`guardrail.probes.generate_probes`) asking tries.
    """

    def __init__(
        self,
        sandbox: Sandbox | None = None,
        *,
        cache: VerdictCache | bool = True,
        policy: Policy | str = Policy.RERANK,
        context_root: str | Path | None = None,
        context_roots: Sequence[str | Path] = (),
        ask: bool = True,
        probe_limit: int = DEFAULT_PROBE_LIMIT,
    ) -> None:
        if sandbox is None:
            from guardrail.sandbox.docker import DockerSandbox

            sandbox = DockerSandbox()
        self.sandbox = sandbox
        self._owns_cache = cache is True
        self.cache: VerdictCache | None = (
            VerdictCache() if cache is True else cache if isinstance(cache, VerdictCache) else None
        )
        self.policy = Policy(policy)
        self.context_root = context_root
        self.context_roots = tuple(context_roots)
        self.ask = ask
        self.probe_limit = probe_limit

    def verify(
        self,
        codes: Sequence[str],
        spec: SpecArg,
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[Verdict]:
        """One verdict per code, in order.

        ``spec`` is one spec for all candidates, or one per candidate; ``None`` means no tests
        (the verdict is ``unverifiable``). ``metadata`` (one per code) carries each candidate's
        module context (`guardrail.context`); a candidate without it runs on its own.
        """
        specs = _specs_for(codes, spec)
        metadatas = list(metadata) if metadata is not None else [None] * len(codes)
        if len(metadatas) != len(codes):
            raise ValueError(f"got {len(metadatas)} metadata for {len(codes)} candidates")
        verdicts: list[Verdict | None] = [None] * len(codes)
        pending: list[tuple[int, PreparedJob]] = []
        identity: str | None = None
        reads = ModuleReads()  # this call's snapshot of the modules its candidates reach
        for index, (code, one_spec) in enumerate(zip(codes, specs, strict=True)):
            early = _judge_without_running(code, one_spec)
            if early is not None:
                verdicts[index] = early
                continue
            assert one_spec is not None  # _judge_without_running answered every None spec
            prepared = prepare_job(
                code, one_spec, metadatas[index], self.context_root, self.context_roots, reads
            )
            if isinstance(prepared, Verdict):
                verdicts[index] = prepared
                continue
            if self.cache is not None:
                identity = identity or self.sandbox.identity
                hit = self.cache.get(code, one_spec, identity, context=prepared.digest)
                if hit is not None:
                    verdicts[index] = hit
                    continue
            pending.append((index, prepared))
        if pending:
            ran = self.sandbox.run([prepared.job for _, prepared in pending])
            for (index, prepared), reported in zip(pending, ran, strict=True):
                # The alias is the host's plan, never the candidate's word.
                verdict = reported.model_copy(update={"alias": prepared.alias})
                verdicts[index] = verdict
                if self.cache is not None:
                    identity = identity or self.sandbox.identity
                    job = prepared.job
                    self.cache.put(job.code, job.spec, identity, verdict, context=prepared.digest)
        return [verdict for verdict in verdicts if verdict is not None]

    async def averify(
        self,
        codes: Sequence[str],
        spec: SpecArg,
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[Verdict]:
        """`verify` in a worker thread; candidates still run concurrently in the sandbox."""
        return await asyncio.to_thread(self.verify, codes, spec, metadata=metadata)

    def observe(
        self,
        codes: Sequence[str],
        spec: Spec,
        probes: Sequence[Probe],
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[list[Observation]]:
        """What each code returns or raises on each probe, as the judge saw it: one sandbox job
        per code (with ``spec.setup`` and its module context, cached like any verdict), one
        probe test per probe. What a call gives is settled first (`guardrail.settling`:
        coroutines run, iterators drained, tuples and lists item by item). A value that cannot
        be judged (a candidate object that is not an iterator, an async generator, a timeout,
        a crash) is ``unjudged``, never compared.

        Raises `SpecError` if a probe calls another name than ``spec.entry_point``, or if the
        probes and setup are too large for one job.
        """
        wrong = [probe.call for probe in probes if probe.entry_point != spec.entry_point]
        if wrong:
            raise SpecError(
                f"probe {wrong[0]!r} does not call the spec's entry point {spec.entry_point!r}"
            )
        if not probes:
            return [[] for _ in codes]
        return self._observed(codes, spec, probes, metadata, _TIMEOUT_RETRIES)

    def _observed(
        self,
        codes: Sequence[str],
        spec: Spec,
        probes: Sequence[Probe],
        metadata: Sequence[Mapping[str, Any] | None] | None,
        retries: int,
    ) -> list[list[Observation]]:
        """`observe`, running again the probes after the one a code's job timed out on (up to
        ``retries`` times): one slow input (a huge size, a long loop) then costs its own
        answer, not the answers to every probe after it."""
        tests = [probe.test for probe in probes]
        probe_spec = Spec.build(tests, spec.entry_point, SETTLE_SETUP + "\n" + spec.setup)
        verdicts = self.verify(codes, probe_spec, metadata=metadata)
        found = [observations_of(verdict, probes) for verdict in verdicts]
        for index, verdict in enumerate(verdicts):
            if verdict.status is not Status.TIMEOUT or not retries:
                continue
            seen = found[index]
            hung = next((i for i, o in enumerate(seen) if not o.judged), len(seen))
            if hung + 1 >= len(probes):
                continue
            context = None if metadata is None else [metadata[index]]
            (rest,) = self._observed([codes[index]], spec, probes[hung + 1 :], context, retries - 1)
            found[index] = [*seen[: hung + 1], *rest]
        return found

    async def aobserve(
        self,
        codes: Sequence[str],
        spec: Spec,
        probes: Sequence[Probe],
        *,
        metadata: Sequence[Mapping[str, Any] | None] | None = None,
    ) -> list[list[Observation]]:
        """`observe` in a worker thread."""
        return await asyncio.to_thread(self.observe, codes, spec, probes, metadata=metadata)

    def gate(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        *,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> GateResult:
        """Verify ``candidates`` (in retrieval order) and apply ``policy`` (default: the Gate's);
        with ``ask`` (default: the Gate's; always under ``agree``), a question when candidates
        verified against one spec disagree on generated inputs (`GateResult.question`)."""
        chosen = self.policy if policy is None else Policy(policy)
        verdicts = self.verify(
            [candidate.code for candidate in candidates],
            spec,
            metadata=[candidate.metadata for candidate in candidates],
        )
        judged = tuple(
            GatedCandidate(candidate=candidate, verdict=verdict, retrieval_rank=rank)
            for rank, (candidate, verdict) in enumerate(zip(candidates, verdicts, strict=True))
        )
        asking = chosen is Policy.AGREE or (self.ask if ask is None else ask)
        question = self._question(judged, _specs_for(verdicts, spec)) if asking else None
        return GateResult(
            policy=chosen,
            judged=judged,
            kept=tuple(apply_policy(judged, chosen, question)),
            question=question,
        )

    async def agate(
        self,
        candidates: Sequence[Candidate],
        spec: SpecArg,
        *,
        policy: Policy | str | None = None,
        ask: bool | None = None,
    ) -> GateResult:
        return await asyncio.to_thread(self.gate, candidates, spec, policy=policy, ask=ask)

    def _question(
        self, judged: Sequence[GatedCandidate], specs: Sequence[Spec | None]
    ) -> Question | None:
        """The question about the verified candidates (`probe_verified`), or None."""
        probing = self.probe_verified(judged, specs)
        if probing is None:
            return None
        return pick_question(
            probing.probes,
            probing.observations,
            [item.candidate.id for item in probing.candidates],
            [item.retrieval_rank for item in probing.candidates],
        )

    def probe_verified(
        self, judged: Sequence[GatedCandidate], specs: Sequence[Spec | None]
    ) -> Probing | None:
        """The verified candidates run on generated inputs, when two or more were verified
        against one and the same spec (the query's tests; never each its own doctests), or None
        (also when the probes are too large for one job together). ``specs`` holds one spec per
        judged candidate, by retrieval rank. The gate's question is picked from what this
        returns; a subclass may record it (the eval reads consensus off the same runs)."""
        verified = [item for item in judged if item.verdict.status is Status.VERIFIED]
        shared = {specs[item.retrieval_rank] for item in verified}
        if len(verified) < 2 or len(shared) != 1:
            return None
        (spec,) = shared
        assert spec is not None  # verified: it had tests
        codes = [item.candidate.code for item in verified]
        probes = generate_probes(spec, codes, limit=self.probe_limit)
        try:
            seen = self.observe(
                codes, spec, probes, metadata=[item.candidate.metadata for item in verified]
            )
        except SpecError:  # probes too large for one job together: nothing to ask with
            return None
        return Probing(
            spec=spec,
            candidates=tuple(verified),
            probes=tuple(probes),
            observations=tuple(tuple(row) for row in seen),
        )

    def close(self) -> None:
        """Close the sandbox (and the cache if the Gate opened it)."""
        self.sandbox.close()
        if self._owns_cache and self.cache is not None:
            self.cache.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _specs_for(codes: Sequence[object], spec: SpecArg) -> list[Spec | None]:
    if spec is None or isinstance(spec, Spec):
        return [spec] * len(codes)
    specs = list(spec)
    if len(specs) != len(codes):
        raise ValueError(
            f"got {len(specs)} specs for {len(codes)} candidates; give one or one each"
        )
    return specs


def _judge_without_running(code: str, spec: Spec | None) -> Verdict | None:
    """Verdicts that need no sandbox: no tests, or code too large or not (valid) Python."""
    if spec is None or not spec.tests:
        return Verdict.unjudged(
            Status.UNVERIFIABLE, Reason.NO_TESTS, "no tests to verify this candidate against"
        )
    return precheck_verdict(code)
