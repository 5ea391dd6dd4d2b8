"""`VerdictCache`: verdicts kept in SQLite so a repeated verification touches no container.

Key: sha256(code, and the digest of its module context and binding when it has one), sha256(spec),
the sandbox identity (image id, runner version and limits, see
`Sandbox.identity`). Only verdicts that depend on nothing but those are stored: a sandbox fault
depends on the engine and is never cached; a ``timeout`` is cached only when the candidate spent
its time computing (`Verdict.busy_timeout`: an endless loop times out again), never when it was
starved by a loaded machine.

A cache is an optimisation, so a cache problem never costs a verdict: a directory that cannot be
created or written, a full disk, a locked or unreadable file each give one `CacheWarning` and the
cache steps aside (reads stop after a read fails, writes after a write fails). A corrupt file is
moved aside to ``<name>.corrupt-<UTC timestamp>`` and a new one started, so one bad file does not
break every later run.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import threading
import time
import warnings
from pathlib import Path

import platformdirs

from guardrail.errors import CacheWarning
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
    """A thread-safe SQLite store of verdicts. ``VerdictCache(":memory:")`` for throwaway use.

    Never raises for I/O: see the module docstring. `problem` says why the cache stepped aside.
    """

    def __init__(self, path: Path | str | None = None) -> None:
        target = default_cache_path() if path is None else path
        self.path = str(target)
        self.hits = 0
        self.misses = 0
        self.problem: str | None = None
        self._lock = threading.Lock()
        self._readable = self._writable = True
        self._db: sqlite3.Connection | None = None
        self._db = self._open()

    @staticmethod
    def key(
        code: str, spec: Spec, sandbox_identity: str, context: str | None = None
    ) -> tuple[str, str, str]:
        """``context``: the digest of what the job carries besides code and spec (its module
        context and binding, `guardrail.jobs`); folded into the code's hash, so a changed helper
        in the module is a different key, and jobs without one keep their old keys."""
        # surrogatepass: text from JSON may hold lone surrogates; they must hash, not crash.
        data = code.encode("utf-8", "surrogatepass")
        if context is not None:
            data += b"\0context:" + context.encode("ascii")
        return (hashlib.sha256(data).hexdigest(), spec.sha256, sandbox_identity)

    def get(
        self, code: str, spec: Spec, sandbox_identity: str, *, context: str | None = None
    ) -> Verdict | None:
        """The stored verdict (marked ``cached=True``), or None (also when the cache is off)."""
        with self._lock:
            row = self._read(self.key(code, spec, sandbox_identity, context))
            try:
                stored = None if row is None else Verdict.model_validate_json(row[0])
            except ValueError as exc:  # a row another version of guardrail wrote
                self._warn(f"a stored verdict cannot be read ({_first_line(exc)}); recomputing it")
                stored = None
            if stored is None:
                self.misses += 1
                return None
            self.hits += 1
        return stored.model_copy(update={"cached": True})

    def put(
        self,
        code: str,
        spec: Spec,
        sandbox_identity: str,
        verdict: Verdict,
        *,
        context: str | None = None,
    ) -> bool:
        """Store a verdict unless it depends on load or faults; returns whether it was stored."""
        if verdict.reason is Reason.SANDBOX_FAULT:
            return False
        if verdict.status is Status.TIMEOUT and not verdict.busy_timeout:
            return False
        key = self.key(code, spec, sandbox_identity, context)
        with self._lock:
            try:
                payload = verdict.model_copy(update={"cached": False}).model_dump_json()
            except ValueError as exc:  # text pydantic cannot encode (a lone surrogate)
                self._warn(f"a verdict cannot be stored ({_first_line(exc)}); it is kept, uncached")
                return False
            return self._write(key, payload)

    def __len__(self) -> int:
        with self._lock:
            if self._db is None:
                return 0
            try:
                (count,) = self._db.execute("SELECT COUNT(*) FROM verdicts").fetchone()
            except sqlite3.Error as exc:
                self._fail(exc, "read")
                return 0
        return int(count)

    def close(self) -> None:
        with self._lock:
            if self._db is not None:
                self._db.close()
                self._db = None

    # ------------------------------------------------------------ I/O that never raises

    def _open(self) -> sqlite3.Connection | None:
        try:
            if self.path != ":memory:":
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            return _connect(self.path)
        except sqlite3.Error as exc:
            if not _corrupt(exc):
                self._off(f"cannot open it: {_describe(exc)}")
                return None
        except OSError as exc:  # only mkdir raises OSError: something is in the folder's way
            self._off(f"cannot create its folder {exc.filename}: {_describe(exc)}")
            return None
        return self._start_over()

    def _start_over(self) -> sqlite3.Connection | None:
        """Move a corrupt file aside and open a fresh one in its place."""
        if self._db is not None:
            self._db.close()
            self._db = None
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        moved = f"{self.path}.corrupt-{stamp}"
        try:
            for suffix in ("", "-wal", "-shm"):  # the journal of a corrupt file must not replay
                if os.path.exists(self.path + suffix):
                    os.replace(self.path + suffix, moved + suffix)
            db = _connect(self.path)
        except (OSError, sqlite3.Error) as exc:
            self._off(f"it is corrupt and cannot be replaced: {_describe(exc)}")
            return None
        self._warn(f"it was corrupt; moved it to {moved} and started a new one")
        return db

    def _read(self, key: tuple[str, str, str]) -> tuple[str] | None:
        if self._db is None or not self._readable:
            return None
        try:
            row: tuple[str] | None = self._db.execute(
                "SELECT verdict FROM verdicts"
                " WHERE code_sha256 = ? AND spec_sha256 = ? AND sandbox = ?",
                key,
            ).fetchone()
        except sqlite3.Error as exc:
            self._fail(exc, "read")
            return None
        return row

    def _write(self, key: tuple[str, str, str], payload: str) -> bool:
        for _ in range(2):  # a corrupt file is replaced by a new one, which gets a second try
            if self._db is None or not self._writable:
                return False
            try:
                self._db.execute(
                    "INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?)", (*key, payload)
                )
            except sqlite3.Error as exc:
                self._fail(exc, "write")
            else:
                return True
        return False

    def _fail(self, exc: sqlite3.Error, what: str) -> None:
        if _corrupt(exc):
            self._db = self._start_over()
            return
        if what == "read":
            self._readable = False
        self._writable = False
        self._warn(f"cannot {what} it: {_describe(exc)}; running uncached{_NEXT_STEP}")

    def _off(self, why: str) -> None:
        self._readable = self._writable = False
        self._warn(f"{why}; running uncached{_NEXT_STEP}")

    def _warn(self, why: str) -> None:
        """One warning per cache: the first problem is news, the rest are its consequences."""
        if self.problem is None:
            self.problem = why
            warnings.warn(f"verdict cache {self.path}: {why}", CacheWarning, stacklevel=2)


def _connect(path: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
    try:
        db.execute("PRAGMA journal_mode=WAL")
        # No fsync per verdict (5 ms each here, under the lock every request shares): in WAL
        # mode NORMAL cannot corrupt the file; a power cut may lose the last verdicts, which
        # are then computed again (a cache loses nothing it cannot recompute).
        db.execute("PRAGMA synchronous=NORMAL")
        db.execute(_SCHEMA)
    except BaseException:
        db.close()
        raise
    return db


_NEXT_STEP = " (free some space, or point GUARDRAIL_CACHE_DIR at a writable folder)"

# SQLite's primary result codes for a damaged file: SQLITE_CORRUPT and SQLITE_NOTADB.
_CORRUPT_CODES = frozenset({11, 26})


def _corrupt(exc: sqlite3.Error) -> bool:
    return (getattr(exc, "sqlite_errorcode", 0) & 0xFF) in _CORRUPT_CODES


def _first_line(exc: BaseException) -> str:
    return (str(exc).splitlines() or [type(exc).__name__])[0]


def _describe(exc: BaseException) -> str:
    return getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
