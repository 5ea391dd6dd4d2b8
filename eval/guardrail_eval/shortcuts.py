"""Shortcut baselines: pickers that run nothing, measured so a pool cannot give the answer away.

A gate's number means something only beside the best picker that never runs code. Each picker
here takes a query's candidates and names the ones it would hand over (ties: all of them), from
what a pool might leak through how it was made:

| picker | hands over |
| --- | --- |
| ``structural-centre`` | the centre of the top candidate's near-clones (`.structural`) |
| ``verbatim-in-context`` | the candidates whose text (indentation aside) is in their module |
| ``name-match`` | the candidates defining the query's entry point by name |
| ``name-then-verbatim`` | of those, the ones verbatim in their module (text found in the files) |
| ``id-shape`` | the candidates whose id has the rarest shape (its marks: ``~``, ``:``, ``-``) |
| ``lowest-id`` | the candidate with the lowest id |
| ``shortest`` / ``longest`` | the candidate(s) with the fewest / most characters |
| ``docstring`` | the candidates whose text holds the most of the query's test sources |

A picker's **exec@1** is the mean over queries of the share of its picks that are correct: a tie
is broken uniformly at random, in expectation, so no order of the candidates decides it. The
pool builder records each picker over every query's family (its canonicals and paired
distractors: chance is 1 / family size) in ``build_report.json``; ``guardrail eval`` runs them on
each system's top ``fetch_k`` (the candidates the gate sees) and shows the best beside the gate.

Some pickers exploit how a pool was made, not what code is (`CONSTRUCTION_PICKERS`: text found in
the shipped files, an id's shape or order, the hidden tests readable in the candidate); over the
families, where a picker that knows nothing is worth ``chance``, `construction_leaks` names those
that beat it by more than `LEAK_MARGIN` and by more than noise (3 standard errors of a uniform
pick, which spares a pool of a few queries its luck): a real-code pool build refuses such a pool.
The structural centre, name match, shortest and longest read the family's shape (one canonical
among its own single-edit mutants), not the pool's making, and are reported, never refused.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from pydantic import BaseModel, Field

from guardrail_eval.pool import Pool, Query
from guardrail_eval.structural import structural_order
from guardrail_eval.units import doctest_source

__all__ = [
    "CONSTRUCTION_PICKERS",
    "LEAK_MARGIN",
    "PICKERS",
    "Candidate",
    "ShortcutBaselines",
    "construction_leaks",
    "family_baselines",
    "picker_values",
    "shortcut_baselines",
]


@dataclass(frozen=True)
class Candidate:
    """One snippet a picker may hand over: its id, text, module text and whether it is correct."""

    corpus_id: str
    code: str
    correct: bool
    module_text: str | None = None


Picker = Callable[[Query, Sequence[Candidate]], list[int]]
_DEF = re.compile(r"^\s*(?:async\s+)?def\s+(\w+)", re.MULTILINE)
_SHAPE = re.compile(r"[A-Za-z0-9]+")  # an id's shape: its words collapsed, its marks kept


def _all(candidates: Sequence[Candidate]) -> list[int]:
    return list(range(len(candidates)))


def _best(candidates: Sequence[Candidate], score: Callable[[Candidate], float]) -> list[int]:
    scores = [score(c) for c in candidates]
    top = max(scores)
    return [i for i, s in enumerate(scores) if s == top]


def _structural(_: Query, candidates: Sequence[Candidate]) -> list[int]:
    return structural_order([c.code for c in candidates])[:1]


@lru_cache(maxsize=256)
def _flat(text: str) -> str:
    """``text`` with every line's indentation dropped: a method's dedented snippet is found in
    its class too."""
    return "\n".join(line.strip() for line in text.splitlines())


def _verbatim(_: Query, candidates: Sequence[Candidate]) -> list[int]:
    found = [
        i
        for i, c in enumerate(candidates)
        if c.module_text and _flat(c.code) in _flat(c.module_text)
    ]
    return found or _all(candidates)


def _name(query: Query, candidates: Sequence[Candidate]) -> list[int]:
    found = [
        i
        for i, c in enumerate(candidates)
        if (match := _DEF.search(c.code)) and match[1] == query.entry_point
    ]
    return found or _all(candidates)


def _name_then_verbatim(query: Query, candidates: Sequence[Candidate]) -> list[int]:
    named = _name(query, candidates)
    found = _verbatim(query, [candidates[i] for i in named])
    return [named[i] for i in found]


def _id_shape(_: Query, candidates: Sequence[Candidate]) -> list[int]:
    shapes = [_SHAPE.sub(lambda m: "a" if m[0].isalpha() else "9", c.corpus_id) for c in candidates]
    counts = Counter(shapes)
    rarest = min(counts.values())
    return [i for i, shape in enumerate(shapes) if counts[shape] == rarest]


def _lowest_id(_: Query, candidates: Sequence[Candidate]) -> list[int]:
    lowest = min(c.corpus_id for c in candidates)
    return [i for i, c in enumerate(candidates) if c.corpus_id == lowest]


def _docstring(query: Query, candidates: Sequence[Candidate]) -> list[int]:
    sources = [doctest_source(test) or test for test in query.test_suite]
    return _best(candidates, lambda c: sum(source in c.code for source in sources))


PICKERS: Mapping[str, Picker] = {
    "structural-centre": _structural,
    "verbatim-in-context": _verbatim,
    "name-match": _name,
    "name-then-verbatim": _name_then_verbatim,
    "id-shape": _id_shape,
    "lowest-id": _lowest_id,
    "shortest": lambda _, candidates: _best(candidates, lambda c: -len(c.code)),
    "longest": lambda _, candidates: _best(candidates, lambda c: len(c.code)),
    "docstring": _docstring,
}
"""Every shortcut picker by name (see the module's table)."""

CONSTRUCTION_PICKERS = (
    "verbatim-in-context",
    "name-then-verbatim",
    "id-shape",
    "lowest-id",
    "docstring",
)
"""The pickers that exploit how a pool was made (see the module)."""

LEAK_MARGIN = 0.10
"""How far above chance a construction picker may get over the families (10 points)."""


class ShortcutBaselines(BaseModel):
    """Each picker's exec@1 over the same candidates, and the best of them."""

    candidates: str = Field(description="what the pickers chose from")
    n_queries: int
    exec_at_1: dict[str, float]
    best: str
    best_exec_at_1: float
    chance: float | None = Field(
        default=None, description="exec@1 of a uniform pick among the candidates (families only)"
    )
    chance_se: float | None = Field(
        default=None, description="the standard error of that uniform pick's exec@1"
    )


def shortcut_baselines(
    queries: Sequence[tuple[Query, Sequence[Candidate]]], candidates: str, *, chance: bool = False
) -> ShortcutBaselines:
    """Every picker's exec@1 over ``queries`` (each with its candidates; a query with none
    counts 0 for every picker, as an empty hand-over does); ``candidates`` says what they are;
    with ``chance``, a uniform pick's exec@1 is recorded too."""
    shares = [sum(c.correct for c in got) / len(got) for _, got in queries if got]
    count = len(queries)
    exec1 = {
        name: round(sum(picker_values(queries, name)) / count, 4) if count else 0.0
        for name in PICKERS
    }
    best = max(exec1, key=lambda name: exec1[name])
    return ShortcutBaselines(
        candidates=candidates,
        n_queries=count,
        exec_at_1=exec1,
        best=best,
        best_exec_at_1=exec1[best],
        chance=round(sum(shares) / count, 4) if chance and count else None,
        chance_se=(
            round(sum(p * (1 - p) for p in shares) ** 0.5 / count, 4) if chance and count else None
        ),
    )


def picker_values(queries: Sequence[tuple[Query, Sequence[Candidate]]], picker: str) -> list[float]:
    """Per query, the share of ``picker``'s picks that are correct (its expected exec@1 with
    ties broken at random; 0 for a query with no candidates)."""
    pick = PICKERS[picker]
    values = []
    for query, offered in queries:
        picked = pick(query, offered) if offered else []
        values.append(sum(offered[i].correct for i in picked) / len(picked) if picked else 0.0)
    return values


def construction_leaks(baselines: ShortcutBaselines, margin: float = LEAK_MARGIN) -> list[str]:
    """``picker: exec@1 against chance`` for each construction picker above chance + ``margin``
    and above chance + 3 standard errors (none when the baselines record no chance)."""
    if baselines.chance is None:
        return []
    limit = baselines.chance + max(margin, 3 * (baselines.chance_se or 0.0))
    return [
        f"{name} {baselines.exec_at_1[name]:.1%} against chance {baselines.chance:.1%}"
        for name in CONSTRUCTION_PICKERS
        if baselines.exec_at_1[name] > limit + 1e-9
    ]


def family_baselines(pool: Pool, module_text: Callable[[str], str | None]) -> ShortcutBaselines:
    """The pickers over each query's family (canonicals and paired distractors, in id order);
    ``module_text(corpus_id)`` is the text of the module file the snippet ships in, if any."""
    queries = []
    for query in pool.queries:
        ids = sorted([*query.correct_corpus_ids, *query.paired_distractor_corpus_ids])
        correct = set(query.correct_corpus_ids)
        queries.append(
            (
                query,
                [
                    Candidate(cid, pool.corpus[cid].code, cid in correct, module_text(cid))
                    for cid in ids
                ],
            )
        )
    return shortcut_baselines(
        queries, "each query's family: its canonicals and paired distractors", chance=True
    )
