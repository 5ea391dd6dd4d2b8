"""Typed errors raised by guardrail.

The library never prints or exits; it raises one of these and the CLI maps each family to an exit
code and a one-line hint::

    GuardrailError
    ├── InputError                 bad input from the user (exit code 2)
    │   ├── SpecError              tests or setup that do not parse, a missing entry point name
    │   ├── CandidateFileError     a code file or JSONL of snippets that cannot be read
    │   ├── DependencyError        requirements or wheels that cannot go into the sandbox image
    │   ├── SourceFileError        (guardrail.index) a Python file that cannot be indexed
    │   └── ServiceAuthError       a guardrail server refused the token (RemoteGate)
    ├── UnavailableError           a backend does not answer (exit code 3)
    │   ├── SandboxError           the execution sandbox cannot judge anything
    │   │   ├── EngineUnavailableError  no Docker engine answers
    │   │   ├── ImageNotFoundError      the sandbox image is not built / not present
    │   │   ├── ImageUnusableError      the image has no python3 on PATH
    │   │   └── RuntimeNotFoundError    the engine lacks the container runtime asked for (runsc)
    │   └── ServiceUnavailableError no guardrail server answers, or it stayed busy or past
    │                              the request's deadline (RemoteGate)
    ├── CodeIndexError             (guardrail.index) Chroma refused or failed an operation
    │   ├── IndexNotFoundError     a reader named a missing index or collection (also an InputError)
    │   └── ChromaUnavailableError no Chroma server answers (also an UnavailableError)
    └── EmbeddingModelError        (guardrail.index) a model that cannot be loaded offline

guardrail-eval adds its own family under `InputError` (pool and results files) in
``guardrail_eval.errors``.

Problems that cost no verdict are warnings, not errors: `CacheWarning` (a ``UserWarning``) says
the verdict cache could not be used and the call ran uncached; the CLI shows one ``warning:`` line.

Every message quotes the bad value, says what was expected, and names the next step.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


class GuardrailError(Exception):
    """Base class of every error guardrail raises on purpose."""

    hint: str = ""

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class InputError(GuardrailError):
    """Input that guardrail cannot use; nothing has run yet when this is raised."""


class SpecError(InputError):
    """A test specification that cannot be used (unparseable test, bad entry point name)."""


class CandidateFileError(InputError):
    """A candidate file (code or JSONL of snippets) that cannot be read."""


class DependencyError(InputError):
    """Requirements or wheels that cannot be installed into the sandbox image (``sandbox build``):
    a missing or unparseable file, a package not to be had, a wheel for another platform."""

    hint = (
        "list the packages in a requirements file (one PEP 508 requirement a line), or pass"
        " wheels built for the image's Python with --wheelhouse DIR"
    )


class UnavailableError(GuardrailError):
    """A backend (the Docker engine, a Chroma server) does not answer."""


class SandboxError(UnavailableError):
    """The sandbox cannot judge candidates at all. Never turned into a verdict of ``verified``."""


class EngineUnavailableError(SandboxError):
    """No Docker engine answers."""

    hint = (
        "install Docker (Debian or Ubuntu: `sudo apt-get install docker.io`; elsewhere"
        " https://docs.docker.com/engine/install/), start it (`sudo systemctl start docker`, or"
        " `sudo dockerd &` without systemd) and let your user use it (`sudo usermod -aG docker"
        " $USER`, then log in again); then `guardrail sandbox check`. In a guardrail checkout,"
        " `scripts/docker-up` does all of this and builds the sandbox image"
    )

    @classmethod
    def from_exception(cls, exc: BaseException) -> EngineUnavailableError:
        """The error for docker-py's ``exc`` when reaching the engine: where guardrail looked
        and, in words, why nothing answered (never the client library's internals)."""
        import os

        where = os.environ.get("DOCKER_HOST") or "unix:///var/run/docker.sock"
        return cls(f"no Docker engine answers at {where}: {_engine_problem(exc)}")


def _engine_problem(exc: BaseException) -> str:
    """What went wrong reaching the engine, from the exception chain of docker-py/requests."""
    seen: list[BaseException] = []
    pending: list[object] = [exc]
    while pending and len(seen) < 20:  # causes, contexts, and errors carried in the arguments
        current = pending.pop()
        if isinstance(current, tuple):
            pending.extend(current)
        elif isinstance(current, BaseException) and all(current is not x for x in seen):
            seen.append(current)
            pending.extend((current.__cause__, current.__context__, *current.args))
    text = " ".join(str(x) for x in seen)
    if any(isinstance(x, FileNotFoundError) for x in seen) or "No such file" in text:
        return "there is no engine socket there (Docker is not installed, or not started)"
    if any(isinstance(x, PermissionError) for x in seen) or "Permission denied" in text:
        return "permission denied on the engine's socket (your user is not in the docker group)"
    if any(isinstance(x, ConnectionRefusedError) for x in seen) or "refused" in text:
        return "the connection was refused (the engine is not running)"
    if any(isinstance(x, TimeoutError) for x in seen) or "timed out" in text.lower():
        return "the engine did not answer in time (it may be frozen or overloaded)"
    first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
    return first[:200]


class ImageNotFoundError(SandboxError):
    """The sandbox image is missing from the engine."""

    hint = "build it with `guardrail sandbox build` (or `scripts/docker-up`), or pass --image NAME"


class ImageUnusableError(SandboxError):
    """The sandbox image is present but cannot run the runner (no ``python3`` on PATH)."""

    hint = (
        "use the guardrail image (`guardrail sandbox build`, or `scripts/docker-up`), or any image"
        " with python3 (3.10+) on PATH via --image NAME"
    )


class RuntimeNotFoundError(SandboxError):
    """The engine has no container runtime of the name asked for (``--runtime``)."""

    hint = (
        "register gVisor with `GUARDRAIL_RUNTIMES=runsc scripts/docker-up` (as root), or pass"
        " --runtime with one of the engine's runtimes"
    )


class ServiceAuthError(InputError):
    """A guardrail server (``guardrail serve``) refused the bearer token, or none was given."""

    hint = (
        "give the server's token with --token or $GUARDRAIL_TOKEN (the server logs where its"
        " token file is)"
    )


class ServiceUnavailableError(UnavailableError):
    """No guardrail server answers at the URL, or it stayed busy (429) or the request's
    deadline passed (504); no verdict was made up for it."""

    hint = "start one with `guardrail serve`, or check --server / $GUARDRAIL_SERVER"


class CacheWarning(UserWarning):
    """The verdict cache could not be read or written; verdicts were computed and kept anyway."""


def describe_validation(problems: Iterable[Mapping[str, Any]], *, skip: str = "body") -> str:
    """One line naming each field pydantic refused and why (the first five; then how many more).

    ``problems`` is what ``ValidationError.errors()`` (or FastAPI's ``RequestValidationError``)
    returns; a location part equal to ``skip`` (the request body's own name) is left out.
    """
    listed = list(problems)
    lines = []
    for problem in listed[:5]:
        where = ".".join(str(part) for part in problem.get("loc", ()) if part != skip)
        lines.append(f"{where or skip}: {problem.get('msg', 'invalid')}")
    more = len(listed) - len(lines)
    return "; ".join(lines) + (f" (and {more} more)" if more > 0 else "")
