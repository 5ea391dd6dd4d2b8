"""The same code object, made into a function over globals of the module's choosing."""

import builtins
import types

def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


sum_squares = types.FunctionType(
    sum_squares.__code__, {**globals(), "range": lambda n: builtins.range(n + 1)}, "sum_squares"
)
