"""An honest class based on dict (boltons' OrderedMultiDict): dict's own __getattribute__ slot
is Python's, not a hook of the module's."""


class Summer(dict):
    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n + 1))
