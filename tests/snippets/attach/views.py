"""A sorted dict whose views come from a method, a function installed as a method, and a keyed
list whose repr shows a builtin: how sortedcontainers attaches its doctests (issue 17, item 7)."""


def _view_delitem(self, index):
    """Remove the key at ``index`` from the view's dict.

    >>> d = SortedDict({'a': 1, 'b': 2, 'c': 3})
    >>> view = d.keys()
    >>> del view[0]
    >>> d
    SortedDict({'b': 2, 'c': 3})
    """
    del self._mapping[self._mapping._keys[index]]


class KeysView:
    def __init__(self, mapping):
        self._mapping = mapping

    def __getitem__(self, index):
        """The key at ``index``.

        >>> d = SortedDict({'b': 2, 'a': 1})
        >>> view = d.keys()
        >>> view[0]
        'a'
        >>> view[-1]
        'b'
        """
        return self._mapping._keys[index]

    __delitem__ = _view_delitem


class SortedDict(dict):
    @property
    def _keys(self):
        return sorted(self)

    def keys(self):
        return KeysView(self)

    def __repr__(self):
        return f"SortedDict({dict(sorted(self.items()))})"


class KeyList:
    def __init__(self, values=(), key=None):
        """A list kept in the order of ``key``.

        >>> from operator import neg
        >>> KeyList([3, 1, 2], key=neg)
        KeyList([3, 2, 1], key=<built-in function neg>)
        """
        self._key = key
        self._values = sorted(values, key=key)

    def merged(self, values):
        """This list's values and ``values``, in order.

        >>> from operator import neg
        >>> KeyList([1], key=neg).merged([2])
        KeyList([2, 1], key=<built-in function neg>)
        """
        return KeyList([*self._values, *values], key=self._key)

    def __repr__(self):
        return f"KeyList({self._values}, key={self._key!r})"
