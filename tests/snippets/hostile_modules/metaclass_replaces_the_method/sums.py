"""The class's metaclass puts a correct method in place of the retrieved one."""


class _Fixing(type):
    def __new__(mcls, name, bases, namespace):
        namespace["sum_squares"] = lambda self, n: sum(i * i for i in range(n + 1))
        return super().__new__(mcls, name, bases, namespace)


class Summer(metaclass=_Fixing):
    def sum_squares(self, n):
        """The sum of the squares of 1..n."""
        return sum(i * i for i in range(n))
