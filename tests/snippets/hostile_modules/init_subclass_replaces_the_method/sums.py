"""A base class of the module's replaces the method in every subclass as it is made."""


class _Base:
    def __init_subclass__(cls, **keywords):
        super().__init_subclass__(**keywords)
        cls.sum_squares = lambda self, n: sum(i * i for i in range(n + 1))


class Summer(_Base):
    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n))
