"""The paper's statistics: McNemar's exact test and bootstrap intervals over queries.

- McNemar exact: two-sided exact binomial test on the discordant counts with p = 0.5
  (``scipy.stats.binomtest(b, b + c, 0.5)``); b = 47, c = 66 gives p = 0.08995 as in the
  release's ``tests/pairwise_tests.json``. Not the mid-p variant.
- Sign test: two per-query values (fractions too: means over draws, a picker's expected hit),
  the same exact binomial test on the queries where one is higher; with 0/1 values it is
  McNemar's exact test.
- Bootstrap: resample query indices with replacement (5,000 resamples, seed 20260510), take the
  mean of each resample, report the percentile interval. The release does not say which interval
  method or generator it used; this uses percentile intervals (numpy's default linear
  interpolation) and ``numpy.random.default_rng(seed)``. Paired differences resample the same
  query indices for both systems. Every interval of one call, and every call with the same seed
  and number of queries, uses the same resampled indices.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.stats import binomtest

__all__ = [
    "BOOTSTRAP_RESAMPLES",
    "BOOTSTRAP_SEED",
    "BootstrapInterval",
    "McNemarResult",
    "SignTest",
    "bootstrap_ci",
    "bootstrap_cis",
    "mcnemar_exact",
    "mcnemar_paired",
    "paired_bootstrap_diff",
    "sign_test",
]

BOOTSTRAP_RESAMPLES = 5000
BOOTSTRAP_SEED = 20260510
ALPHA = 0.05


@dataclass(frozen=True, slots=True)
class BootstrapInterval:
    """A point estimate (mean, or mean difference) with its percentile bootstrap interval."""

    estimate: float
    low: float
    high: float
    n: int
    resamples: int
    seed: int
    alpha: float = ALPHA

    def contains(self, value: float) -> bool:
        """The interval contains ``value`` (bounds included)."""
        return self.low <= value <= self.high


@dataclass(frozen=True, slots=True)
class McNemarResult:
    """A paired comparison of two binary outcomes per query (the release's pairwise fields).

    ``a_only``/``b_only`` are the discordant counts (a succeeded and b did not, and vice versa).
    """

    a_only: int
    b_only: int
    both: int
    neither: int
    p_value: float

    @property
    def n(self) -> int:
        """Number of queries."""
        return self.a_only + self.b_only + self.both + self.neither

    @property
    def a_rate(self) -> float:
        """Share of queries where a succeeded."""
        return (self.a_only + self.both) / self.n

    @property
    def b_rate(self) -> float:
        """Share of queries where b succeeded."""
        return (self.b_only + self.both) / self.n

    @property
    def delta(self) -> float:
        """a_rate - b_rate."""
        return (self.a_only - self.b_only) / self.n


def mcnemar_exact(b: int, c: int) -> float:
    """Two-sided exact McNemar p for discordant counts ``b`` and ``c`` (1.0 when both are 0)."""
    if b < 0 or c < 0:
        raise ValueError(f"discordant counts must be >= 0, not {b} and {c}")
    if b + c == 0:
        return 1.0
    return float(binomtest(b, b + c, 0.5, alternative="two-sided").pvalue)


def mcnemar_paired(a: ArrayLike, b: ArrayLike) -> McNemarResult:
    """McNemar exact test of two 0/1 vectors over the same queries in the same order."""
    first, second = _paired(a, b)
    for name, vector in (("a", first), ("b", second)):
        if not np.isin(vector, (0.0, 1.0)).all():
            raise ValueError(f"{name} must hold only 0 and 1 (a binary outcome per query)")
    hit_a, hit_b = first == 1.0, second == 1.0
    a_only = int(np.sum(hit_a & ~hit_b))
    b_only = int(np.sum(~hit_a & hit_b))
    return McNemarResult(
        a_only=a_only,
        b_only=b_only,
        both=int(np.sum(hit_a & hit_b)),
        neither=int(np.sum(~hit_a & ~hit_b)),
        p_value=mcnemar_exact(a_only, b_only),
    )


@dataclass(frozen=True, slots=True)
class SignTest:
    """An exact two-sided sign test of a against b over the same queries."""

    a_higher: int
    b_higher: int
    ties: int
    p_value: float


def sign_test(a: ArrayLike, b: ArrayLike) -> SignTest:
    """Exact sign test of two per-query vectors (queries where they are equal are left out);
    on 0/1 vectors it is `mcnemar_paired`'s p."""
    first, second = _paired(a, b)
    difference = first - second
    a_higher = int(np.sum(difference > 1e-12))
    b_higher = int(np.sum(difference < -1e-12))
    return SignTest(
        a_higher=a_higher,
        b_higher=b_higher,
        ties=int(first.size) - a_higher - b_higher,
        p_value=mcnemar_exact(a_higher, b_higher),
    )


def bootstrap_cis(
    vectors: Mapping[str, ArrayLike],
    n: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    alpha: float = ALPHA,
) -> dict[str, BootstrapInterval]:
    """Percentile intervals of the mean of each per-query vector (all of the same length).

    All vectors share one set of resampled query indices, so the result for one key equals
    `bootstrap_ci` of that vector alone.
    """
    arrays = {key: _vector(values) for key, values in vectors.items()}
    lengths = {array.size for array in arrays.values()}
    if len(lengths) != 1:
        raise ValueError(f"all vectors must have the same number of queries, got {sorted(lengths)}")
    indices = _resample_indices(lengths.pop(), n, seed)
    return {key: _interval(array, indices, seed, alpha) for key, array in arrays.items()}


def bootstrap_ci(
    values: ArrayLike,
    n: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    alpha: float = ALPHA,
) -> BootstrapInterval:
    """Percentile bootstrap interval of the mean of per-query ``values`` (``n`` resamples)."""
    return bootstrap_cis({"values": values}, n=n, seed=seed, alpha=alpha)["values"]


def paired_bootstrap_diff(
    a: ArrayLike,
    b: ArrayLike,
    n: int = BOOTSTRAP_RESAMPLES,
    seed: int = BOOTSTRAP_SEED,
    alpha: float = ALPHA,
) -> BootstrapInterval:
    """Interval of mean(a) - mean(b), resampling the same query indices for both systems."""
    first, second = _paired(a, b)
    return bootstrap_ci(first - second, n=n, seed=seed, alpha=alpha)


def _resample_indices(size: int, n: int, seed: int) -> NDArray[np.int64]:
    if size < 1:
        raise ValueError("cannot bootstrap an empty vector")
    if n < 1:
        raise ValueError(f"the number of resamples must be >= 1, not {n}")
    return np.random.default_rng(seed).integers(0, size, size=(n, size), dtype=np.int64)


def _interval(
    values: NDArray[np.float64], indices: NDArray[np.int64], seed: int, alpha: float
) -> BootstrapInterval:
    if not 0.0 < alpha < 1.0:
        raise ValueError(f"alpha must be between 0 and 1, not {alpha}")
    means = values[indices].mean(axis=1)
    low, high = np.percentile(means, [100.0 * alpha / 2.0, 100.0 * (1.0 - alpha / 2.0)])
    return BootstrapInterval(
        estimate=float(values.mean()),
        low=float(low),
        high=float(high),
        n=int(values.size),
        resamples=int(indices.shape[0]),
        seed=seed,
        alpha=alpha,
    )


def _vector(values: ArrayLike) -> NDArray[np.float64]:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"expected one value per query (a 1-D vector), got shape {array.shape}")
    if not np.isfinite(array).all():
        raise ValueError("per-query values must be finite numbers")
    return array


def _paired(a: ArrayLike, b: ArrayLike) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    first, second = _vector(a), _vector(b)
    if first.size != second.size:
        raise ValueError(
            f"paired vectors must cover the same queries: {first.size} and {second.size} values"
        )
    return first, second
