"""Text helpers."""

from __future__ import annotations

import re
import unicodedata


def slugify(title: str) -> str:
    """Turn a title into a lowercase URL slug with words joined by hyphens.

    >>> slugify("Hello, World!")
    'hello-world'
    >>> slugify("  Crème   brûlée ")
    'creme-brulee'
    """
    ascii_text = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode("ascii")
    words = re.findall(r"[a-z0-9]+", ascii_text.lower())
    return "-".join(words)


def word_count(text: str) -> dict[str, int]:
    """Count how often each lowercase word occurs in the text.

    >>> word_count("the cat and the hat")
    {'the': 2, 'cat': 1, 'and': 1, 'hat': 1}
    >>> word_count("")
    {}
    """
    counts: dict[str, int] = {}
    for word in re.findall(r"[a-z']+", text.lower()):
        counts[word] = counts.get(word, 0) + 1
    return counts


def is_palindrome(text: str) -> bool:
    """Tell whether the text reads the same backwards, ignoring case and non-letters.

    >>> is_palindrome("A man, a plan, a canal: Panama")
    True
    >>> is_palindrome("guardrail")
    False
    """
    letters = [char.lower() for char in text if char.isalnum()]
    return letters == letters[::-1]


def truncate(text: str, width: int, ellipsis: str = "...") -> str:
    """Shorten text to at most ``width`` characters, ending with an ellipsis when cut.

    >>> truncate("retrieval augmented generation", 12)
    'retrieval...'
    >>> print(truncate("short", 10))
    short
    >>> truncate("abc", 2, ellipsis="...")
    Traceback (most recent call last):
    ...
    ValueError: width must be larger than the ellipsis
    """
    if len(text) <= width:
        return text
    if width <= len(ellipsis):
        raise ValueError("width must be larger than the ellipsis")
    return text[: width - len(ellipsis)] + ellipsis


def camel_to_snake(name: str) -> str:
    """Convert a CamelCase identifier to snake_case."""
    spaced = re.sub(r"(?<=[a-z0-9])([A-Z])", r"_\1", name)
    return spaced.lower()
