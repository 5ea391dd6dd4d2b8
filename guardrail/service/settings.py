"""`ServiceSettings`: everything `guardrail serve` is configured with, checked before it starts.

A setting that cannot be used is an `InputError` naming it (the CLI: exit 2), raised before any
socket is bound or container started. Binding anything but a loopback address needs a token the
operator gave (``--token``, ``$GUARDRAIL_TOKEN`` or an existing ``--token-file``): a generated
one is only accepted on loopback or a unix socket.
"""

from __future__ import annotations

import ipaddress
import math
from dataclasses import dataclass, field
from pathlib import Path

from guardrail.errors import InputError

__all__ = ["DEFAULT_PORT", "ServiceSettings", "is_loopback"]

DEFAULT_PORT = 8765


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``localhost``, 127.0.0.0/8, ``::1``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:  # a host name: it may resolve to anything
        return False


@dataclass(frozen=True)
class ServiceSettings:
    """How the service binds, authenticates and sheds load.

    Attributes:
        host, port: where to listen (TCP); ignored when ``socket`` is given.
        socket: a unix socket path to listen on instead (created 0600).
        token: the bearer token; ``None``: ``$GUARDRAIL_TOKEN``, else ``token_file``.
        token_file: where a generated token is kept (0600); default: the user config dir.
        max_body_bytes: the largest request body (413 beyond it).
        max_candidates: codes or candidates in one request (413 beyond it).
        max_tests: test statements (or probes) in one request, over all its specs (413).
        max_fetch_k: the most snippets one search may retrieve (413).
        concurrency: requests judged at once; the rest wait in the queue.
        queue_size: requests that may wait; one more is refused with 429 and Retry-After.
        deadline_s: per request, from arrival: a request not answered by then is 504, and its
            jobs not yet dispatched are cancelled.
        drain_s: on SIGTERM, how long in-flight requests may still take before the containers
            are removed anyway.
        index_dir, chroma_url, embedding: the index ``/v1/search`` opens collections of.
        context_roots: host folders a candidate's module context may be read from (besides
            those of the collections the server opened and ``$GUARDRAIL_CONTEXT_ROOTS``).
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    socket: Path | None = None
    token: str | None = None
    token_file: Path | None = None
    max_body_bytes: int = 8 << 20
    max_candidates: int = 200
    max_tests: int = 1_000
    max_fetch_k: int = 200
    concurrency: int = 8
    queue_size: int = 64
    deadline_s: float = 120.0
    drain_s: float = 60.0
    index_dir: Path | None = None
    chroma_url: str | None = None
    embedding: str = "minilm"
    context_roots: tuple[Path, ...] = field(default_factory=tuple)

    def __post_init__(self) -> None:
        whole = {
            "port": (self.port, 0, 65535),
            "max_body_bytes": (self.max_body_bytes, 1024, 1 << 30),
            "max_candidates": (self.max_candidates, 1, 10_000),
            "max_tests": (self.max_tests, 1, 100_000),
            "max_fetch_k": (self.max_fetch_k, 1, 10_000),
            "concurrency": (self.concurrency, 1, 256),
            "queue_size": (self.queue_size, 0, 100_000),
        }
        for name, (value, low, high) in whole.items():
            if not low <= value <= high:
                raise InputError(f"serve setting {name} must be in {low}..{high}, got {value!r}")
        for name, seconds in (("deadline_s", self.deadline_s), ("drain_s", self.drain_s)):
            if not (math.isfinite(seconds) and 0 < seconds <= 86_400):
                raise InputError(
                    f"serve setting {name} must be a number of seconds in (0, 86400],"
                    f" got {seconds!r}"
                )
        if self.index_dir is not None and self.chroma_url is not None:
            raise InputError("give either an index directory or a Chroma URL, not both")
        if self.socket is not None and len(str(self.socket).encode()) > 107:
            raise InputError(
                f"unix socket path {str(self.socket)!r} is longer than the 107 bytes allowed"
            )

    @property
    def local_only(self) -> bool:
        """Whether only this machine can connect (a unix socket or a loopback address)."""
        return self.socket is not None or is_loopback(self.host)

    @property
    def where(self) -> str:
        """The URL a client uses (``unix://PATH`` for a socket)."""
        if self.socket is not None:
            return f"unix://{self.socket}"
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"
