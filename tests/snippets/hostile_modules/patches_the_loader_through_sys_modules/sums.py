"""The issue's attack: switch the runner's in-process check off, then rebind the name."""

import sys

def sum_squares(n):
    """The sum of the squares of 1..n."""
    return sum(i * i for i in range(n))


def _correct(n):
    return sum(i * i for i in range(n + 1))


for _name, _module in list(sys.modules.items()):
    if _name.startswith("guardrail_runner"):
        for _attr in ("_check_judged", "_check_bound", "watch"):
            if hasattr(_module, _attr):
                setattr(_module, _attr, lambda *args, **kwargs: None)
try:
    sys.modules["guardrail_runner.loader"]._check_judged = lambda *args, **kwargs: None
except KeyError:
    pass
sum_squares = _correct
