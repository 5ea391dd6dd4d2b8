"""Opening Chroma for `CodeIndex`: a client (in memory, a local directory, or a server), an
existing collection, and Chroma's (and its HTTP client's) errors translated into ours."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import chromadb
import httpx
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Embeddable, EmbeddingFunction
from chromadb.config import Settings
from chromadb.errors import ChromaError, NotFoundError

from guardrail.errors import GuardrailError
from guardrail.index.errors import ChromaUnavailableError, CodeIndexError, IndexNotFoundError

__all__ = ["chroma_errors", "existing_collection", "make_client", "require_local_index"]

_CHROMA_DATABASE = "chroma.sqlite3"  # the file a PersistentClient directory always holds


def _settings() -> Settings:
    # A fresh object each time: chromadb's client factories write into the settings they get.
    return Settings(anonymized_telemetry=False)


def make_client(*, directory: Path, url: str | None, ephemeral: bool) -> ClientAPI:
    """An in-memory client, one of the server at ``url``, or one of the index in ``directory``
    (created when missing).

    Raises:
        ChromaUnavailableError: no server answers at ``url``.
        CodeIndexError: ``url`` is no Chroma server URL, or the directory cannot be opened.
    """
    if ephemeral:
        return chromadb.EphemeralClient(settings=_settings())
    if url is not None:
        host, port, ssl = _parse_url(url)
        try:
            return chromadb.HttpClient(host=host, port=port, ssl=ssl, settings=_settings())
        except (ChromaError, ValueError, httpx.HTTPError) as exc:
            # HttpClient checks the server at construction; it reports no answer as ValueError.
            raise ChromaUnavailableError(f"no Chroma server answers at {url} ({exc})") from exc
    with chroma_errors(f"open the index at {directory}", None):
        directory.mkdir(parents=True, exist_ok=True)
        return chromadb.PersistentClient(path=str(directory), settings=_settings())


def require_local_index(directory: Path) -> None:
    """Raise unless ``directory`` holds a Chroma index; checks without creating anything.

    ``PersistentClient`` creates the directory and its database file when they are missing.
    """
    if not (directory / _CHROMA_DATABASE).is_file():
        what = "does not exist" if not directory.exists() else "holds no Chroma index"
        raise IndexNotFoundError(f"no index at {directory}: the directory {what}")


def existing_collection(
    client: ClientAPI, name: str, function: EmbeddingFunction[Embeddable], location: str
) -> Collection:
    """The collection ``name`` of ``client``; `IndexNotFoundError` naming ``location`` if none."""
    try:
        return client.get_collection(name, embedding_function=function)
    except NotFoundError:
        raise IndexNotFoundError(f"no collection {name!r} in the index at {location}") from None


def _parse_url(url: str) -> tuple[str, int, bool]:
    parts = urlsplit(url)
    if parts.scheme not in {"http", "https"} or not parts.hostname or parts.path not in {"", "/"}:
        raise CodeIndexError(
            f"not a Chroma server URL: {url!r}; expected http(s)://HOST[:PORT]",
            hint="for example --chroma-url http://127.0.0.1:8000",
        )
    try:
        port = parts.port
    except ValueError:
        raise CodeIndexError(f"not a Chroma server URL: {url!r}; the port is invalid") from None
    ssl = parts.scheme == "https"
    return parts.hostname, port or (443 if ssl else 8000), ssl


@contextmanager
def chroma_errors(action: str, url: str | None, hint: str = "") -> Iterator[None]:
    """Translate Chroma's (and its HTTP client's) errors into `CodeIndexError`s."""
    try:
        yield
    except GuardrailError:
        raise
    except (httpx.TransportError, ConnectionError) as exc:
        raise ChromaUnavailableError(
            f"cannot {action}: the Chroma server at {url} does not answer ({exc})"
        ) from exc
    except (ChromaError, ValueError, OSError, httpx.HTTPError) as exc:
        raise CodeIndexError(f"cannot {action}: {type(exc).__name__}: {exc}", hint=hint) from exc
