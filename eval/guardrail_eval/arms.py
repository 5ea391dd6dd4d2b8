"""What one eval arm handed over, query by query: the data the summary and the reports read.

Arm names (also the results files' names, ``results/<arm>.json``):

| arm | what hands the agent its code |
| --- | --- |
| ``<system>`` | the retriever alone (ungated) |
| ``<system>+structural`` | a picker that never runs code (`guardrail_eval.structural`) |
| ``<system>+upper-bound`` | the gate seeing every test (the ground truth's own tests): a ceiling |
| ``<system>+visible<N>`` | the gate seeing N random visible units per query (seeded draws) |
| ``<system>+visible<N>+consensus`` | the same gate, nobody answering: the largest cluster of
  verified candidates agreeing on its probe inputs goes first (MBR-exec) |
| ``<system>+visible<N>+agree`` | the same gate, nobody answering: nothing when the verified
  candidates disagree on a probe input (the ``agree`` policy) |
| ``<system>+visible<N>+noisy-ask<Q>`` | up to Q questions, answered by a noisy answerer |
| ``<system>+visible<N>+oracle-ask<Q>`` | up to Q questions, answered by an oracle: an upper
  bound |

`ArmKind.role` says what an arm's number is: the retriever, a baseline that runs no code, the
gate's result (what a deployed agent can have), or an upper bound (it knows the ground truth).

An arm with several draws holds one outcome per (draw, query), draw-major: its metrics are the
mean over draws, which is also the plain mean over all its outcomes (every draw has every query).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from guardrail.verdict import Verdict
from guardrail_eval.metrics import RankedQuery
from guardrail_eval.pool import Pool, Query

__all__ = ["HONEST_KINDS", "Arm", "ArmKind", "GateCost", "JudgedItem", "QueryOutcome"]


class ArmKind(StrEnum):
    UNGATED = "ungated"
    STRUCTURAL = "structural"
    UPPER_BOUND = "upper-bound"
    VISIBLE = "visible"
    CONSENSUS = "consensus"
    AGREE = "agree"
    NOISY_ASK = "noisy-ask"
    ORACLE_ASK = "oracle-ask"

    @property
    def role(self) -> str:
        """``retriever``, ``baseline`` (runs no code), ``result`` or ``upper bound``."""
        return _ROLES[self]

    @property
    def asks(self) -> bool:
        """The arm's gate asks questions that someone answers."""
        return self in {ArmKind.NOISY_ASK, ArmKind.ORACLE_ASK}


_ROLES = {
    ArmKind.UNGATED: "retriever",
    ArmKind.STRUCTURAL: "baseline",
    ArmKind.UPPER_BOUND: "upper bound",
    ArmKind.VISIBLE: "result",
    ArmKind.CONSENSUS: "result",
    ArmKind.AGREE: "result",
    ArmKind.NOISY_ASK: "result",
    ArmKind.ORACLE_ASK: "upper bound",
}
HONEST_KINDS = frozenset(kind for kind, role in _ROLES.items() if role == "result")
"""The gate's arms a deployed agent can really have: no oracle, no test it is not given."""
_GATED = {ArmKind.UPPER_BOUND, ArmKind.VISIBLE, *HONEST_KINDS, ArmKind.ORACLE_ASK}


@dataclass(frozen=True, slots=True)
class JudgedItem:
    """One snippet handed over (or dropped), with what execution said about it.

    Attributes:
        corpus_id: the snippet's pool id.
        score: the retriever's score.
        retrieval_rank: 1-based rank in the retriever's ranking.
        truth: the verdict against the query's full test suite (the ground truth).
        gate_verdict: the gate's verdict against the visible tests (gated arms only).
    """

    corpus_id: str
    score: float
    retrieval_rank: int
    truth: Verdict
    gate_verdict: Verdict | None = None

    @property
    def passes_all_tests(self) -> bool:
        return self.truth.verified


@dataclass(frozen=True, slots=True)
class GateCost:
    """What gating one query cost: wall-clock latency, sandbox runs, verdict-cache hits."""

    latency_s: float
    sandbox_runs: int
    cache_hits: int
    verdicts: int = 0


@dataclass(frozen=True, slots=True)
class QueryOutcome:
    """What one arm handed over for one query (in one draw).

    Attributes:
        visible: the indices of the tests the gate saw (visible and ask arms), else None.
        questions: questions the gate asked and were answered (ask arms).
        silent: the final gate round raised no question (gated arms that ask, when known).
        hidden_probe: the gate's own question was on a hidden test's input, up to the final
            round (never asked: `guardrail_eval.asking`); None where the gate did not ask.
        wrong_answers: answers that were not the canonical's (noisy-ask arms), else None.
    """

    query: Query
    items: tuple[JudgedItem, ...]
    snippet_scores: dict[str, float] | None = None
    dropped: tuple[JudgedItem, ...] = ()
    cost: GateCost | None = None
    draw: int = 0
    visible: tuple[int, ...] | None = None
    questions: int | None = None
    silent: bool | None = None
    hidden_probe: bool | None = None
    wrong_answers: int | None = None

    def ranked(self, pool: Pool) -> RankedQuery:
        """The handed-over ranking as metric input."""
        return RankedQuery(
            query_id=self.query.query_id,
            items=tuple(
                pool.ranked_item(
                    self.query,
                    item.corpus_id,
                    passes_all_tests=item.passes_all_tests,
                    score=item.score,
                )
                for item in self.items
            ),
            n_correct=len(self.query.correct_corpus_ids),
            snippet_scores=(
                pool.snippet_scores(self.query, self.snippet_scores)
                if self.snippet_scores is not None
                else None
            ),
        )


@dataclass
class Arm:
    """One system under one setting; ``outcomes`` hold ``draws`` x queries, draw-major."""

    system: str
    kind: ArmKind
    visible: int | None = None
    questions: int | None = None
    draws: int = 1
    outcomes: list[QueryOutcome] = field(default_factory=list)

    @property
    def name(self) -> str:
        """``bm25``, ``bm25+structural``, ``bm25+upper-bound``, ``bm25+visible1``,
        ``bm25+visible1+consensus``, ``bm25+visible1+agree``, ``bm25+visible1+noisy-ask2``,
        ``bm25+visible1+oracle-ask2``."""
        if self.kind is ArmKind.UNGATED:
            return self.system
        if self.kind in {ArmKind.STRUCTURAL, ArmKind.UPPER_BOUND}:
            return f"{self.system}+{self.kind.value}"
        name = f"{self.system}+visible{self.visible}"
        if self.kind in {ArmKind.CONSENSUS, ArmKind.AGREE}:
            return f"{name}+{self.kind.value}"
        return f"{name}+{self.kind.value}{self.questions}" if self.kind.asks else name

    @property
    def gated(self) -> bool:
        """The arm's ranking came from the gate (it ran code against tests)."""
        return self.kind in _GATED

    def ranked_queries(self, pool: Pool) -> list[RankedQuery]:
        return [outcome.ranked(pool) for outcome in self.outcomes]
