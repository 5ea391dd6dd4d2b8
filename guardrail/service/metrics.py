"""The service's counters and histograms, rendered in the Prometheus text format (0.0.4).

Kept by hand (a few dicts under a lock) rather than with a client library: the service needs
counters by label and one latency histogram, and ``/metrics`` must stay cheap to scrape.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Mapping

from guardrail.verdict import Verdict

__all__ = ["BUCKETS_S", "Metrics"]

BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0)


def _labels(pairs: Mapping[str, str]) -> str:
    if not pairs:
        return ""
    escaped = (
        key + '="' + value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        for key, value in pairs.items()
    )
    return "{" + ",".join(escaped) + "}"


class Metrics:
    """Request counts and latencies by route, verdicts by status, refusals by reason."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._requests: Counter[tuple[str, str, int]] = Counter()
        self._buckets: dict[str, list[int]] = {}
        self._sums: dict[str, float] = {}
        self._verdicts: Counter[tuple[str, bool]] = Counter()
        self._refused: Counter[str] = Counter()

    def request(self, method: str, route: str, status: int, seconds: float) -> None:
        with self._lock:
            self._requests[(method, route, status)] += 1
            buckets = self._buckets.setdefault(route, [0] * (len(BUCKETS_S) + 1))
            for index, bound in enumerate(BUCKETS_S):
                if seconds <= bound:
                    buckets[index] += 1
            buckets[-1] += 1
            self._sums[route] = self._sums.get(route, 0.0) + seconds

    def verdicts(self, verdicts: Iterable[Verdict]) -> None:
        with self._lock:
            for verdict in verdicts:
                self._verdicts[(verdict.status.value, verdict.cached)] += 1

    def refused(self, reason: str) -> None:
        with self._lock:
            self._refused[reason] += 1

    def render(self, gauges: Mapping[str, tuple[str, float]]) -> str:
        """The text exposition; ``gauges``: name -> (help, value), read at scrape time."""
        lines: list[str] = []

        def family(name: str, kind: str, text: str) -> None:
            lines.extend((f"# HELP {name} {text}", f"# TYPE {name} {kind}"))

        with self._lock:
            family("guardrail_requests_total", "counter", "HTTP requests by route and status.")
            for (method, route, status), count in sorted(self._requests.items()):
                labels = _labels({"method": method, "route": route, "status": str(status)})
                lines.append(f"guardrail_requests_total{labels} {count}")
            family("guardrail_request_seconds", "histogram", "Request latency by route.")
            for route, buckets in sorted(self._buckets.items()):
                for bound, count in zip((*BUCKETS_S, "+Inf"), buckets, strict=True):
                    labels = _labels({"route": route, "le": str(bound)})
                    lines.append(f"guardrail_request_seconds_bucket{labels} {count}")
                lines.append(
                    f"guardrail_request_seconds_sum{_labels({'route': route})} "
                    f"{self._sums[route]:.6f}"
                )
                lines.append(
                    f"guardrail_request_seconds_count{_labels({'route': route})} {buckets[-1]}"
                )
            family("guardrail_verdicts_total", "counter", "Verdicts handed out, by status.")
            for (verdict_status, cached), total in sorted(self._verdicts.items()):
                labels = _labels({"status": verdict_status, "cached": str(cached).lower()})
                lines.append(f"guardrail_verdicts_total{labels} {total}")
            family("guardrail_refused_total", "counter", "Requests refused or cancelled.")
            for reason, count in sorted(self._refused.items()):
                lines.append(f"guardrail_refused_total{_labels({'reason': reason})} {count}")
        for name, (text, value) in gauges.items():
            family(name, "gauge", text)
            lines.append(f"{name} {value:g}")
        return "\n".join(lines) + "\n"
