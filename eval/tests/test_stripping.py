"""Docstring examples (a real-code pool's hidden tests) are removed from what ships, and only
they: prose, code and the docstrings' quotes stay byte for byte."""

from __future__ import annotations

import pytest

from guardrail_eval.stripping import strip_examples

SOURCE = '''"""A module.

>>> 1 + 1
2
"""


def double(x):
    """Double *x*.

    >>> double(2)
    4
    >>> for i in range(2):
    ...     print(double(i))
    0
    2

    Prose after the examples stays.
    >>> double(3)
    6"""
    return 2 * x


class Box:
    r""">>> Box().get()
    1
    """

    def get(self):
        "One line, in single quotes: '>>> not an example' stays as written."
        return 1
'''

STRIPPED = '''"""A module.

"""


def double(x):
    """Double *x*.


    Prose after the examples stays.
    """
    return 2 * x


class Box:
    r"""
    """

    def get(self):
        "One line, in single quotes: '>>> not an example' stays as written."
        return 1
'''


def test_every_docstrings_examples_go_and_everything_else_stays() -> None:
    assert strip_examples(SOURCE) == STRIPPED
    assert strip_examples(STRIPPED) == STRIPPED  # nothing left to remove


def test_source_that_does_not_parse_is_refused_not_guessed_at() -> None:
    with pytest.raises(SyntaxError):
        strip_examples("def f(:\n")
