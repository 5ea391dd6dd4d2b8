"""Structured logs: one JSON object per line on stderr, for every request and lifecycle event.

Fields: ``ts`` (UTC, ISO 8601), ``level``, ``logger``, ``event`` (the message) and the event's
own fields (``request_id``, ``method``, ``route``, ``status``, ``duration_ms``...). Text that
came from a client (a path, an error message) is `guardrail.safetext.clean` and capped, so a
log line is always one line of valid JSON. Uvicorn's own loggers go through the same formatter;
its access log is off (the service logs each request itself, with more).
"""

from __future__ import annotations

import json
import logging
import sys
from datetime import UTC, datetime
from typing import Any

from guardrail.safetext import clean

__all__ = ["JsonFormatter", "configure_logging", "logger"]

logger = logging.getLogger("guardrail.service")

_STANDARD = frozenset([*vars(logging.makeLogRecord({})), "message", "asctime", "taskName"])


class JsonFormatter(logging.Formatter):
    """A log record as one line of JSON."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "event": clean(record.getMessage(), 2_000),
        }
        for key, value in vars(record).items():
            if key not in _STANDARD:
                entry[key] = clean(value, 2_000) if isinstance(value, str) else value
        if record.exc_info:
            entry["traceback"] = clean(self.formatException(record.exc_info), 20_000)
        return json.dumps(entry, default=str, ensure_ascii=True)


def configure_logging(level: str = "info") -> None:
    """JSON lines on stderr for the service's and uvicorn's loggers."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter())
    for name in ("guardrail.service", "uvicorn", "uvicorn.error"):
        named = logging.getLogger(name)
        named.handlers[:] = [handler]
        named.setLevel(level.upper())
        named.propagate = False
    logging.getLogger("uvicorn.access").disabled = True
