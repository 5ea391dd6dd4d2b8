"""`VerdictCache`: verdicts kept in SQLite so a repeated verification touches no container.

Key: sha256(code), sha256(spec), the sandbox identity (image id, runner version and limits, see
`Sandbox.identity`). Only verdicts that depend on nothing but those are stored: a sandbox fault
depends on the engine and is never cached; a ``timeout`` is cached only when the candidate spent
its time computing (`Verdict.busy_timeout`: an endless loop times out again), never when it was
starved by a loaded machine.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
from pathlib import Path

import platformdirs

from guardrail.spec import Spec
from guardrail.verdict import Reason, Status, Verdict

__all__ = ["VerdictCache", "default_cache_path"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verdicts (
    code_sha256 TEXT NOT NULL,
    spec_sha256 TEXT NOT NULL,
    sandbox TEXT NOT NULL,
    verdict TEXT NOT NULL,
    PRIMARY KEY (code_sha256, spec_sha256, sandbox)
)
"""


def default_cache_path() -> Path:
    """``$GUARDRAIL_CACHE_DIR/verdicts.sqlite``, else the user cache dir of the platform."""
    base = os.environ.get("GUARDRAIL_CACHE_DIR") or platformdirs.user_cache_dir("guardrail")
    return Path(base) / "verdicts.sqlite"


class VerdictCache:
    """A thread-safe SQLite store of verdicts. ``VerdictCache(":memory:")`` for throwaway use."""

    def __init__(self, path: Path | str | None = None) -> None:
        target = default_cache_path() if path is None else path
        if str(target) != ":memory:":
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        self.path = str(target)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute(_SCHEMA)
        self.hits = 0
        self.misses = 0

    @staticmethod
    def key(code: str, spec: Spec, sandbox_identity: str) -> tuple[str, str, str]:
        # surrogatepass: candidate text may hold lone surrogates; its key must still exist.
        digest = hashlib.sha256(code.encode("utf-8", "surrogatepass")).hexdigest()
        return (digest, spec.sha256, sandbox_identity)

    def get(self, code: str, spec: Spec, sandbox_identity: str) -> Verdict | None:
        """The stored verdict (marked ``cached=True``), or None."""
        with self._lock:
            row = self._db.execute(
                "SELECT verdict FROM verdicts"
                " WHERE code_sha256 = ? AND spec_sha256 = ? AND sandbox = ?",
                self.key(code, spec, sandbox_identity),
            ).fetchone()
            if row is None:
                self.misses += 1
                return None
            self.hits += 1
        return Verdict.model_validate_json(row[0]).model_copy(update={"cached": True})

    def put(self, code: str, spec: Spec, sandbox_identity: str, verdict: Verdict) -> bool:
        """Store a verdict unless it depends on load or faults; returns whether it was stored."""
        if verdict.reason is Reason.SANDBOX_FAULT:
            return False
        if verdict.status is Status.TIMEOUT and not verdict.busy_timeout:
            return False
        payload = verdict.model_copy(update={"cached": False}).model_dump_json()
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?)",
                (*self.key(code, spec, sandbox_identity), payload),
            )
        return True

    def __len__(self) -> int:
        with self._lock:
            (count,) = self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()
        return int(count)

    def close(self) -> None:
        with self._lock:
            self._db.close()
