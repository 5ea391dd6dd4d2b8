import importlib.metadata


def double(x: int) -> int:
    """Twice ``x``: nothing to do with metadata, but its package reads it at import.

    >>> double(21)
    42
    """
    return 2 * x


def user_agent(client: str) -> str:
    """The version read at call time.

    >>> user_agent("curl")
    'curl stamp/1.2.3'
    """
    return f"{client} stamp/{importlib.metadata.version('stamp')}"
