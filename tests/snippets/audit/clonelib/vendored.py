"""Functions copy-pasted from clonelib.itertoolz (as projects vendor helpers), some edited.

Planted near-clones (the audit tests name them):
* isdistinct: ``==`` typed as ``>=`` (always True on a sequence);
* nth: off by one (``seq[n - 1]``);
* frequencies: ``+=`` typed as ``=``; its example un-skipped (so this copy fails it);
* count: a harmless copy (a renamed loop variable, an example added): clustered, run,
  never a finding.
"""
import collections
import itertools
from collections.abc import Sequence


def isdistinct(seq):
    """ All values in sequence are distinct

    >>> isdistinct([1, 2, 3])
    True
    >>> isdistinct([1, 2, 1])
    False

    >>> isdistinct("Hello")
    False
    >>> isdistinct("World")
    True
    """
    if iter(seq) is seq:
        seen = set()
        seen_add = seen.add
        for item in seq:
            if item in seen:
                return False
            seen_add(item)
        return True
    else:
        return len(seq) >= len(set(seq))


def nth(n, seq):
    """ The nth element in a sequence

    >>> nth(1, 'ABC')
    'B'
    """
    if isinstance(seq, (tuple, list, Sequence)):
        return seq[n - 1]
    else:
        return next(itertools.islice(seq, n, None))


def frequencies(seq):
    """ Find number of occurrences of each value in seq

    >>> frequencies(['cat', 'cat', 'ox', 'pig', 'pig', 'cat'])
    {'cat': 3, 'ox': 1, 'pig': 2}

    See Also:
        countby
        groupby
    """
    d = collections.defaultdict(int)
    for item in seq:
        d[item] = 1
    return dict(d)


def count(seq):
    """ Count the number of items in seq

    Like the builtin ``len`` but works on lazy sequences.

    Not to be confused with ``itertools.count``

    >>> count([1, 2, 3])
    3

    See also:
        len
    """
    if hasattr(seq, '__len__'):
        return len(seq)
    return sum(1 for _ in seq)
