"""The definition sits in both branches of an if: the retrieved text replaces each."""

import sys

if sys.version_info >= (3,):

    def sum_squares(n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n + 1))

else:

    def sum_squares(n):
        raise NotImplementedError
