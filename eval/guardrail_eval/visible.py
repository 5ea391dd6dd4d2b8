"""Which tests the gate sees when tests are thin: random subsets of units, seeded, several draws.

A draw is made of whole units (`guardrail_eval.units`: a test with the earlier examples it needs,
as a doctest sequence), never of single tests taken out of their sequence: "visible N" is N
units, their tests in the suite's order. A release suite's asserts are each a unit of one.

The first test of a suite is not a random test (it is often the simplest call): on the built-in
pool the gate with the first test had exec@1 0.543, a random one 0.417, the last 0.186. So each
(query, draw) gets its own seeded random permutation of the suite's units, and the gate with N
visible units sees the first N of that permutation (in the suite's order). Subsets are nested
across N within a draw (visible 2 adds one unit to visible 1), so a sweep over N varies only N.
"""

from __future__ import annotations

import hashlib

import numpy as np

from guardrail.spec import Spec
from guardrail_eval.pool import Pool, Query

__all__ = ["DEFAULT_DRAWS", "visible_indices", "visible_spec"]

DEFAULT_DRAWS = 2
"""Draws of a default ``guardrail eval``: on the built-in pool 2 draws widen visible1's 95%
interval 1.27x against 5 (the noisy-ask arms' up to 1.5x) for 2/5 of the gating time
(`bench/bench_draws.py`; docs/evaluation.md, "How many draws"); ``--draws 5`` and ``make
eval-full`` give the full statistics."""


def _permutation(query: Query, draw: int, seed: int) -> list[int]:
    digest = hashlib.sha256(f"{seed}\0{draw}\0{query.query_id}".encode()).digest()
    rng = np.random.default_rng(int.from_bytes(digest[:8], "big"))
    return [int(i) for i in rng.permutation(len(query.units))]


def visible_indices(query: Query, visible: int, draw: int, seed: int) -> tuple[int, ...]:
    """The 0-based indices of the tests of the ``visible`` units of ``draw`` (at most every
    unit), sorted."""
    units = query.units
    drawn = _permutation(query, draw, seed)[:visible]
    return tuple(sorted({index for unit in drawn for index in units[unit]}))


def visible_spec(pool: Pool, query: Query, indices: tuple[int, ...]) -> Spec:
    """The query's spec with only the tests at ``indices`` (the rest are hidden)."""
    tests = [query.test_suite[i] for i in indices]
    return Spec.build(tests, pool.entry_point(query), setup=query.test_setup)
