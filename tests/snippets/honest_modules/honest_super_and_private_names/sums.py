"""A method with a __class__ cell (super()) and a private, name-mangled attribute."""


class _Base:
    def _square(self, i):
        return i * i


class Summer(_Base):
    __zero = 0

    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        total = self.__zero
        for i in range(n + 1):
            total += super()._square(i)
        return total
