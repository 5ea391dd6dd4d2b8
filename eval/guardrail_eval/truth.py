"""The specs a run needs and the ground truth: every snippet judged against the full suite.

`Specs` builds (and so checks) each spec once: the full suite, or the tests a draw made visible.
`Judge` holds the ground-truth verdicts, each (query, snippet) pair judged once: a gate run that
saw the full suite is reused, the rest is run in chunks that keep the sandbox pool busy.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from guardrail.gate import Gate, GateResult
from guardrail.spec import Spec
from guardrail.verdict import Verdict
from guardrail_eval.pool import Pool, Query
from guardrail_eval.visible import visible_indices, visible_spec

if TYPE_CHECKING:
    from guardrail_eval.runner import EvalSettings

__all__ = ["Judge", "Specs"]

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
            codes = [self.specs.pool.corpus[corpus_id].code for _, corpus_id in chunk]
            specs = [self.specs.get(todo[key], None) for key in chunk]
            verdicts = self.gate.verify(codes, specs)
            self.verdicts_seen += len(verdicts)
            self._truth.update(zip(chunk, verdicts, strict=True))
            on_progress(start + len(chunk), len(keys))

    def truth(self, query: Query, corpus_id: str) -> Verdict:
        return self._truth[(query.query_id, corpus_id)]
