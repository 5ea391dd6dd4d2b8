"""The service's bearer token: required on every endpoint, compared in constant time.

Where it comes from, first found wins: the ``token`` setting (``--token``), ``$GUARDRAIL_TOKEN``,
the token file (``--token-file``, default ``<user config dir>/guardrail/service-token``). When
none exists, one is generated on first start into the token file, created 0600 (never readable by
other users; a token file others can read is refused). `RemoteGate` reads the same sources, so a
client on the same machine and user needs no configuration.

A generated token serves loopback and unix-socket binds only: binding another address needs a
token the operator chose to give (settings), since then it must be handed to other machines.
"""

from __future__ import annotations

import hmac
import os
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path

import platformdirs

from guardrail.errors import InputError

__all__ = [
    "ENV_VAR",
    "MIN_TOKEN_CHARS",
    "ResolvedToken",
    "default_token_file",
    "read_client_token",
    "resolve_token",
    "token_matches",
]

ENV_VAR = "GUARDRAIL_TOKEN"
MIN_TOKEN_CHARS = 16


@dataclass(frozen=True)
class ResolvedToken:
    """The token and where it came from (``given``, ``env``, ``file`` or ``generated``)."""

    value: str
    source: str
    file: Path | None = None


def default_token_file() -> Path:
    return Path(platformdirs.user_config_dir("guardrail")) / "service-token"


def _checked(value: str, where: str) -> str:
    value = value.strip()
    if len(value) < MIN_TOKEN_CHARS or not value.isprintable() or " " in value:
        raise InputError(
            f"the token from {where} must be at least {MIN_TOKEN_CHARS} printable characters"
            " without spaces",
            hint="generate one with `python -c 'import secrets; print(secrets.token_urlsafe())'`",
        )
    return value


def _read_file(path: Path) -> str | None:
    """The token in ``path``, or None when there is no such file; refused when others can read
    or write it, or it is not a regular file."""
    try:
        info = path.lstat()
    except FileNotFoundError:
        return None
    if not stat.S_ISREG(info.st_mode):
        raise InputError(f"token file {str(path)!r} is not a regular file")
    if info.st_mode & 0o077:
        raise InputError(
            f"token file {str(path)!r} is readable or writable by others"
            f" (mode {stat.S_IMODE(info.st_mode):o})",
            hint=f"chmod 600 {path}",
        )
    return _checked(path.read_text(encoding="utf-8"), f"token file {str(path)!r}")


def _generate(path: Path) -> str:
    """A new token, written to ``path`` with mode 0600 (never briefly wider: created so)."""
    token = secrets.token_urlsafe(32)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        handle.write(token + "\n")
    return token


def resolve_token(
    given: str | None, token_file: Path | None, *, generate: bool = True
) -> ResolvedToken:
    """The server's token (see the module docstring); generated into the file if there is none
    and ``generate`` (a bind only this machine reaches) allows it.

    Raises:
        InputError: a token too short, a token file that is not private or not a file, or no
            token at all where none may be generated (nothing is written then).
    """
    if given is not None:
        return ResolvedToken(_checked(given, "--token"), "given")
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        return ResolvedToken(_checked(from_env, f"${ENV_VAR}"), "env")
    path = token_file or default_token_file()
    existing = _read_file(path)
    if existing is not None:
        return ResolvedToken(existing, "file", path)
    if not generate:
        raise InputError(
            "refusing to listen on an address other machines can reach without a token the"
            f" operator gave (no --token, no ${ENV_VAR}, no token file at {str(path)!r})",
            hint="pass --token or set $GUARDRAIL_TOKEN (hand the same to the clients), or listen"
            " on 127.0.0.1 or a --socket",
        )
    try:
        return ResolvedToken(_generate(path), "generated", path)
    except FileExistsError:  # another server generated it meanwhile
        token = _read_file(path)
        assert token is not None
        return ResolvedToken(token, "file", path)


def read_client_token(given: str | None = None) -> str | None:
    """The token a client sends: ``given``, ``$GUARDRAIL_TOKEN``, else the default token file
    (a server of the same user on this machine); None when there is none."""
    if given:
        return given
    from_env = os.environ.get(ENV_VAR)
    if from_env:
        return from_env.strip()
    try:
        return _read_file(default_token_file())
    except (InputError, OSError):
        return None


def token_matches(header: str | None, token: str) -> bool:
    """Whether an ``Authorization`` header carries ``token`` as a bearer token."""
    if not header:
        return False
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer":
        return False
    return hmac.compare_digest(value.strip().encode(), token.encode())
