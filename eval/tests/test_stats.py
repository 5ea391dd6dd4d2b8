"""Statistics: McNemar exact and bootstrap intervals against the release's published values.

Published values used here (release ``tests/pairwise_tests.json`` and
``tests/confidence_intervals.json``, as printed in its tests/README.md):

- "BM25 vs baai/bge-large-en-v1.5", exec@1: a_only 47, b_only 66, both 7, neither 819,
  a_rate 0.057508, b_rate 0.077742, delta -0.020234, mcnemar_exact_p 0.08995,
  bootstrap_ci_95 [-0.0426, 0.0021].
- baai/bge-base-en-v1.5 exec@1: mean 0.083, ci95 [0.066, 0.101] (78 of 939).
- gemini-embedding-2 exec@1 (311 of 939): about [0.299, 0.362] (execretrieval.md).
"""

from __future__ import annotations

import numpy as np
import pytest

from guardrail_eval.stats import (
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    bootstrap_ci,
    bootstrap_cis,
    mcnemar_exact,
    mcnemar_paired,
    paired_bootstrap_diff,
)


def ones(count: int, total: int = 939) -> np.ndarray:
    """A 0/1 vector of ``count`` ones among ``total`` queries."""
    return np.concatenate([np.ones(count), np.zeros(total - count)])


def bm25_and_bge_large() -> tuple[np.ndarray, np.ndarray]:
    """exec@1 vectors with 47 BM25-only hits, 66 bge-large-only hits, 7 shared, 819 neither."""
    bm25 = np.r_[np.ones(47), np.zeros(66), np.ones(7), np.zeros(819)]
    bge = np.r_[np.zeros(47), np.ones(66), np.ones(7), np.zeros(819)]
    return bm25, bge


def test_mcnemar_exact_matches_the_release() -> None:
    assert round(mcnemar_exact(47, 66), 5) == 0.08995
    assert mcnemar_exact(66, 47) == mcnemar_exact(47, 66)


def test_mcnemar_exact_hand_cases() -> None:
    assert mcnemar_exact(0, 5) == pytest.approx(2 * 0.5**5)  # 0.0625
    assert mcnemar_exact(1, 1) == 1.0
    assert mcnemar_exact(0, 0) == 1.0  # no discordant pairs: no evidence of a difference
    # 0 vs 10: both tails of Binomial(10, 1/2) at the extremes
    assert mcnemar_exact(0, 10) == pytest.approx(2 / 1024)


def test_mcnemar_exact_is_not_the_mid_p_variant() -> None:
    from scipy.stats import binom

    mid_p = 2 * (binom.cdf(47, 113, 0.5) - 0.5 * binom.pmf(47, 113, 0.5))
    assert round(mid_p, 5) != 0.08995
    assert mcnemar_exact(47, 66) == pytest.approx(2 * binom.cdf(47, 113, 0.5))


def test_mcnemar_from_paired_vectors() -> None:
    result = mcnemar_paired(*bm25_and_bge_large())
    assert (result.a_only, result.b_only, result.both, result.neither) == (47, 66, 7, 819)
    assert result.n == 939
    assert round(result.a_rate, 6) == 0.057508
    assert round(result.b_rate, 6) == 0.077742
    assert round(result.delta, 6) == -0.020234
    assert round(result.p_value, 5) == 0.08995


def test_mcnemar_refuses_non_binary_or_unpaired_vectors() -> None:
    with pytest.raises(ValueError, match="only 0 and 1"):
        mcnemar_paired([0, 0.5], [0, 1])
    with pytest.raises(ValueError, match="same queries"):
        mcnemar_paired([0, 1], [0, 1, 1])
    with pytest.raises(ValueError, match=">= 0"):
        mcnemar_exact(-1, 3)


def test_bootstrap_bge_base_exec1_matches_the_release() -> None:
    interval = bootstrap_ci(ones(78))
    assert round(interval.estimate, 3) == 0.083
    assert (round(interval.low, 3), round(interval.high, 3)) == (0.066, 0.101)
    assert (interval.n, interval.resamples, interval.seed) == (939, 5000, 20260510)


def test_bootstrap_gemini_exec1_is_about_the_published_interval() -> None:
    interval = bootstrap_ci(ones(311))
    assert interval.estimate == 311 / 939
    assert interval.low == pytest.approx(0.299, abs=0.003)
    assert interval.high == pytest.approx(0.362, abs=0.001)


def test_paired_bootstrap_matches_the_release() -> None:
    interval = paired_bootstrap_diff(*bm25_and_bge_large())
    assert round(interval.estimate, 6) == -0.020234
    assert (round(interval.low, 4), round(interval.high, 4)) == (-0.0426, 0.0021)
    assert interval.contains(0.0)


def test_paired_bootstrap_resamples_the_same_queries_for_both() -> None:
    a = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    # same vector: every resample's difference is exactly 0
    same = paired_bootstrap_diff(a, a, n=200)
    assert (same.low, same.high) == (0.0, 0.0)
    # b = a - 1 everywhere: every resample's difference is exactly 1
    shifted = paired_bootstrap_diff(a, a - 1.0, n=200)
    assert (shifted.estimate, shifted.low, shifted.high) == (1.0, 1.0, 1.0)


def test_bootstrap_is_deterministic_and_seeded() -> None:
    values = ones(100, 300)
    first, again = bootstrap_ci(values), bootstrap_ci(values)
    assert first == again
    other_seed = bootstrap_ci(values, seed=1)
    assert (other_seed.low, other_seed.high) != (first.low, first.high)
    assert (BOOTSTRAP_RESAMPLES, BOOTSTRAP_SEED) == (5000, 20260510)


def test_bootstrap_cis_share_indices_with_single_calls() -> None:
    rng = np.random.default_rng(0)
    vectors = {"exec@1": rng.integers(0, 2, 200), "ndcg@3": rng.random(200)}
    together = bootstrap_cis(vectors)
    assert together["exec@1"] == bootstrap_ci(vectors["exec@1"])
    assert together["ndcg@3"] == bootstrap_ci(vectors["ndcg@3"])


def test_bootstrap_constant_vector_has_a_point_interval() -> None:
    interval = bootstrap_ci(np.full(50, 0.25), n=100)
    assert (interval.estimate, interval.low, interval.high) == (0.25, 0.25, 0.25)


def test_alpha_widens_or_narrows_the_interval() -> None:
    values = ones(300)
    wide, narrow = bootstrap_ci(values, alpha=0.01), bootstrap_ci(values, alpha=0.5)
    assert wide.low < narrow.low <= narrow.high < wide.high


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: bootstrap_ci([]), "empty"),
        (lambda: bootstrap_ci([[1.0, 0.0]]), "1-D"),
        (lambda: bootstrap_ci([1.0, float("nan")]), "finite"),
        (lambda: bootstrap_ci([1.0, 0.0], n=0), "resamples"),
        (lambda: bootstrap_ci([1.0, 0.0], alpha=1.5), "alpha"),
        (lambda: bootstrap_cis({"a": [1.0], "b": [1.0, 0.0]}), "same number"),
    ],
)
def test_bad_bootstrap_input_is_refused(call: object, message: str) -> None:
    assert callable(call)
    with pytest.raises(ValueError, match=message):
        call()
