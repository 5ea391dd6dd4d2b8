"""A module whose one doctest is wrong: the code is fine, the documented output is not."""


def shout(text: str) -> str:
    """Upper-case ``text`` and add an exclamation mark.

    >>> shout("hi")
    '[bold]HI!'
    """
    return text.upper() + "!"


def whisper(text: str) -> str:
    """Lower-case ``text`` and add an ellipsis.

    >>> whisper("HI")
    'hi...'
    """
    return text.lower() + "..."
