"""The specs a run needs and the ground truth: every snippet judged against the full suite.

`Specs` builds (and so checks) each spec once: the full suite, or the tests a draw made visible.
`Judge` holds the ground-truth verdicts, each (query, snippet) pair judged once: a gate run that
saw the full suite is reused, the rest is run in chunks that keep the sandbox pool busy.

Ground truth binds the candidate (`bound_truth`): judged in its module, a snippet's tests call
the module's names, so they may pass through a definition that is not the snippet at all (the
tests of ``cached`` call the module's own ``cached`` whatever ``CachedFunction.__init__``'s text
is). A snippet in module context counts as passing a query only when it is the definition the
tests' name reaches: its qualified name is the query's canonical's, or the gate bound the tests'
name to it (an ``alias``, which the gate gives only when its module defines no such name).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from guardrail.gate import Gate, GateResult
from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict
from guardrail_eval.pool import Pool, Query
from guardrail_eval.poolcontext import candidate_metadata
from guardrail_eval.visible import visible_indices, visible_spec

if TYPE_CHECKING:
    from guardrail_eval.runner import EvalSettings

__all__ = ["Judge", "Specs", "bound_truth"]

_TRUTH_CHUNK = 64  # ground-truth jobs per gate call: large enough to keep the pool busy


class Specs:
    """Every spec a run needs, built (and so checked) once; keyed by the visible test indices."""

    def __init__(self, pool: Pool, settings: EvalSettings) -> None:
        self.pool = pool
        self.settings = settings
        self._specs: dict[tuple[str, tuple[int, ...] | None], Spec] = {}

    def check(self, queries: Sequence[Query], settings: EvalSettings) -> None:
        for query in queries:
            self.get(query, None)
            for visible in settings.visible_tests:
                for draw in range(settings.draws):
                    self.get(query, visible_indices(query, visible, draw, settings.seed))

    def get(self, query: Query, indices: tuple[int, ...] | None) -> Spec:
        """The spec with the tests at ``indices``; None: the full suite."""
        key = (query.query_id, indices)
        if key not in self._specs:
            self._specs[key] = (
                self.pool.spec(query)
                if indices is None
                else visible_spec(self.pool, query, indices)
            )
        return self._specs[key]


class Judge:
    """Ground truth: verdicts against the full suite, each (query, snippet) pair judged once."""

    def __init__(self, gate: Gate, specs: Specs) -> None:
        self.gate = gate
        self.specs = specs
        self._truth: dict[tuple[str, str], Verdict] = {}
        self.verdicts_seen = 0

    def remember(self, query: Query, result: GateResult, spec: Spec) -> None:
        """Reuse the gate's verdicts as ground truth when it saw the full suite."""
        self.verdicts_seen += len(result.judged)
        if spec.sha256 != self.specs.get(query, None).sha256:
            return
        for item in result.judged:
            self._truth[(query.query_id, item.candidate.id)] = item.verdict

    def judge_all(
        self, pairs: Sequence[tuple[Query, str]], on_progress: Callable[[int, int], None]
    ) -> None:
        """Judge every pair not judged yet, in chunks that keep the sandbox pool busy."""
        todo: dict[tuple[str, str], Query] = {}
        for query, corpus_id in pairs:
            key = (query.query_id, corpus_id)
            if key not in self._truth:
                todo.setdefault(key, query)
        keys = list(todo)
        on_progress(0, len(keys))
        for start in range(0, len(keys), _TRUTH_CHUNK):
            chunk = keys[start : start + _TRUTH_CHUNK]
            pool = self.specs.pool
            entries = [pool.corpus[corpus_id] for _, corpus_id in chunk]
            specs = [self.specs.get(todo[key], None) for key in chunk]
            metadata = [candidate_metadata(pool, entry) for entry in entries]
            verdicts = self.gate.verify([e.code for e in entries], specs, metadata=metadata)
            self.verdicts_seen += len(verdicts)
            self._truth.update(zip(chunk, verdicts, strict=True))
            on_progress(start + len(chunk), len(keys))

    def truth(self, query: Query, corpus_id: str) -> Verdict:
        """The ground truth of ``corpus_id`` for ``query``, bound to the candidate
        (`bound_truth`)."""
        return bound_truth(
            self.specs.pool, query, corpus_id, self._truth[(query.query_id, corpus_id)]
        )


def bound_truth(pool: Pool, query: Query, corpus_id: str, verdict: Verdict) -> Verdict:
    """``verdict``, unless it is a pass that did not judge the candidate's own definition (see
    the module): then a ``missing_entry_point`` error saying so, with no test outcome (the
    outcomes were the module's function's, not the candidate's)."""
    entry = pool.corpus[corpus_id]
    if not verdict.verified or verdict.alias is not None or entry.context is None:
        return verdict
    targets = {
        canonical.context.qualified_name
        for cid in query.correct_corpus_ids
        if (canonical := pool.corpus[cid]).context is not None
    }
    own = entry.context.qualified_name
    if not own or not targets or own in targets:
        return verdict
    called = sorted(targets)[0]
    return Verdict.unjudged(
        Status.ERROR,
        Reason.MISSING_ENTRY_POINT,
        f"ground truth: the tests call {called}, which in this snippet's module is the module's"
        f" own definition, not this snippet ({own}): their passing says nothing of its text",
    )
