"""Integer arithmetic helpers."""

from __future__ import annotations

import math
from functools import cache


def gcd(a: int, b: int) -> int:
    """Greatest common divisor of two integers (Euclid's algorithm).

    >>> gcd(12, 18)
    6
    >>> gcd(7, 0)
    7
    """
    a, b = abs(a), abs(b)
    while b:
        a, b = b, a % b
    return a


def lcm(a: int, b: int) -> int:
    """Least common multiple of two integers; zero if either is zero.

    >>> lcm(4, 6)
    12
    """
    if a == 0 or b == 0:
        return 0
    return abs(a * b) // math.gcd(a, b)


def is_prime(n: int) -> bool:
    """Tell whether n is a prime number.

    >>> [k for k in range(20) if is_prime(k)]
    [2, 3, 5, 7, 11, 13, 17, 19]
    >>> is_prime(1)
    False
    """
    if n < 2:
        return False
    return all(n % divisor for divisor in range(2, math.isqrt(n) + 1))


@cache
def fibonacci(n: int) -> int:
    """The n-th Fibonacci number, with fibonacci(0) == 0 and fibonacci(1) == 1.

    >>> fibonacci(10)
    55
    >>> fibonacci(-1)
    Traceback (most recent call last):
    ValueError: n must be non-negative
    """
    if n < 0:
        raise ValueError("n must be non-negative")
    if n < 2:
        return n
    return fibonacci(n - 1) + fibonacci(n - 2)


def clamp(value: float, low: float, high: float) -> float:
    """Limit a value to the closed range [low, high].

    >>> clamp(15, 0, 10)
    10
    >>> values = [-5, 5, 50]
    >>> [clamp(v, 0, 10) for v in values]
    [0, 5, 10]
    """
    return max(low, min(value, high))


def mean(values: list[float]) -> float:
    """Arithmetic mean of a non-empty list of numbers.

    >>> mean([1, 2, 3, 4])  # doctest: +SKIP
    2.5
    """
    if not values:
        raise ValueError("mean of an empty list")
    return sum(values) / len(values)
