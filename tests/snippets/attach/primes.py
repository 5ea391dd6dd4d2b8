"""A docstring that seeds the random generator halfway, as more-itertools' is_prime does."""


def is_prime(n):
    """Whether ``n`` is prime.

    >>> is_prime(37)
    True
    >>> is_prime(3 * 13)
    False

    Random primes (the seed is the judge's process state, not the candidate's):

    >>> from random import seed, randrange
    >>> seed(18675309)
    >>> next(filter(is_prime, map(randrange, [10**6] * 100)))
    826453
    """
    return n > 1 and all(n % d for d in range(2, int(n**0.5) + 1))
