"""The one summary line every timing bench prints: rounds, median, p95, min, max, IQR and the
ratio to a reference way (absolute times differ several-fold between machines; ratios do not)."""

from __future__ import annotations

import statistics


def summary(name: str, times: list[float], reference: float, *, digits: int = 1) -> str:
    """``name`` and its times (ms) as one aligned row; the ratio is median / ``reference``."""
    ordered = sorted(times)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    q1, _, q3 = statistics.quantiles(ordered, n=4) if len(ordered) > 1 else (ordered[0],) * 3
    median = statistics.median(ordered)
    cells = [median, p95, ordered[0], ordered[-1]]
    shown = "".join(f" {value:>9.{digits}f}" for value in cells)
    return f"{name:38s} {len(times):>6d}{shown} {q3 - q1:>8.{digits}f} {median / reference:>10.2f}x"
