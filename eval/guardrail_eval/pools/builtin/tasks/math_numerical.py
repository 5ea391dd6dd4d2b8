"""Built-in tasks of the `math_numerical` domain: integer and floating-point arithmetic."""

TASKS: list[dict[str, object]] = [
    {
        "id": "math_numerical_01",
        "domain": "math_numerical",
        "query": (
            "Integer square root: return the largest integer whose square is at most n, "
            "using binary search so it is exact for very large integers. Raises ValueError "
            "for negative n."
        ),
        "entry_point": "integer_sqrt",
        "code": """\
def integer_sqrt(n):
    if n < 0: raise ValueError("n must be non-negative")
    if n < 2: return n
    lo, hi = 1, n // 2
    while lo <= hi:
        mid = (lo + hi) // 2
        if mid * mid <= n:
            lo = mid + 1
        else:
            hi = mid - 1
    return hi
""",
        "tests": [
            "assert integer_sqrt(0) == 0",
            "assert integer_sqrt(1) == 1",
            "assert integer_sqrt(2) == 1",
            "assert integer_sqrt(4) == 2",
            "assert integer_sqrt(15) == 3",
            "assert integer_sqrt(16) == 4",
            "assert integer_sqrt(17) == 4",
            "assert integer_sqrt(10**12) == 10**6",
            "assert integer_sqrt(10**12 - 1) == 10**6 - 1",
            "try:\n    integer_sqrt(-1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "math_numerical_02",
        "domain": "math_numerical",
        "query": (
            "Binomial coefficient n choose k computed exactly with integers. Returns 0 when k "
            "is negative or greater than n, and raises ValueError for negative n."
        ),
        "entry_point": "binomial",
        "code": """\
def binomial(n, k):
    if n < 0: raise ValueError("n must be non-negative")
    if k < 0 or k > n: return 0
    k = min(k, n - k)
    result = 1
    for i in range(1, k + 1):
        result = result * (n - k + i) // i
    return result
""",
        "tests": [
            "assert binomial(5, 2) == 10",
            "assert binomial(5, 0) == 1",
            "assert binomial(5, 5) == 1",
            "assert binomial(0, 0) == 1",
            "assert binomial(10, 3) == 120",
            "assert binomial(52, 5) == 2598960",
            "assert binomial(5, 6) == 0",
            "assert binomial(5, -1) == 0",
            "assert binomial(3, 7) == 0",
            "try:\n    binomial(-1, 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "math_numerical_03",
        "domain": "math_numerical",
        "query": (
            "Weighted average of a list of values with a parallel list of weights: the sum of "
            "value times weight divided by the sum of the weights. Raises ValueError when the "
            "lists differ in length or the weights sum to zero (including empty input)."
        ),
        "entry_point": "weighted_average",
        "code": """\
def weighted_average(values, weights):
    if len(values) != len(weights): raise ValueError("values and weights differ in length")
    total = sum(weights)
    if total == 0: raise ValueError("weights sum to zero")
    acc = 0.0
    for value, weight in zip(values, weights):
        acc += value * weight
    return acc / total
""",
        "tests": [
            "assert abs(weighted_average([1, 2, 3], [1, 1, 1]) - 2.0) < 1e-9",
            "assert abs(weighted_average([10, 20], [3, 1]) - 12.5) < 1e-9",
            "assert abs(weighted_average([3, 1], [10, 20]) - 50 / 30) < 1e-9",
            "assert abs(weighted_average([5], [2]) - 5.0) < 1e-9",
            "assert abs(weighted_average([1, 100], [0, 4]) - 100.0) < 1e-9",
            "assert abs(weighted_average([2.5, -1.5], [1, 3]) - (-0.5)) < 1e-9",
            "try:\n    weighted_average([], [])\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    weighted_average([1, 2], [1])\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    weighted_average([1, 2], [1, -1])\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "math_numerical_04",
        "domain": "math_numerical",
        "query": (
            "Check whether an integer is prime by trial division up to its square root. "
            "Numbers below 2, including zero and negatives, are not prime."
        ),
        "entry_point": "is_prime",
        "code": """\
def is_prime(n):
    if n < 2: return False
    if n < 4: return True
    if n % 2 == 0: return False
    i = 3
    while i * i <= n:
        if n % i == 0: return False
        i += 2
    return True
""",
        "tests": [
            "assert is_prime(2) is True",
            "assert is_prime(3) is True",
            "assert is_prime(1) is False",
            "assert is_prime(0) is False",
            "assert is_prime(-7) is False",
            "assert is_prime(4) is False",
            "assert is_prime(9) is False",
            "assert is_prime(25) is False",
            "assert is_prime(97) is True",
            "assert is_prime(7919) is True",
            "assert is_prime(7917) is False",
        ],
        "setup": "",
    },
    {
        "id": "math_numerical_05",
        "domain": "math_numerical",
        "query": (
            "Convert a non-negative integer to its string representation in a base from 2 to "
            "36, using lowercase letters for digits above 9; zero is '0'. Raises ValueError "
            "for a base outside 2..36 or a negative number."
        ),
        "entry_point": "to_base",
        "code": """\
def to_base(n, base):
    if base < 2 or base > 36: raise ValueError("base must be in 2..36")
    if n < 0: raise ValueError("n must be non-negative")
    if n == 0: return "0"
    digits = "0123456789abcdefghijklmnopqrstuvwxyz"
    out = []
    while n > 0:
        n, remainder = divmod(n, base)
        out.append(digits[remainder])
    return "".join(reversed(out))
""",
        "tests": [
            "assert to_base(10, 2) == '1010'",
            "assert to_base(255, 16) == 'ff'",
            "assert to_base(0, 7) == '0'",
            "assert to_base(1, 2) == '1'",
            "assert to_base(35, 36) == 'z'",
            "assert to_base(36, 36) == '10'",
            "assert to_base(5, 10) == '5'",
            "assert to_base(2, 3) == '2'",
            "try:\n    to_base(5, 1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    to_base(5, 37)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    to_base(-1, 10)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "math_numerical_06",
        "domain": "math_numerical",
        "query": (
            "Percentile of a list of numbers with linear interpolation between the two nearest "
            "ranks of the sorted values, for p between 0 and 100 inclusive. Raises ValueError "
            "for an empty list or p outside [0, 100]."
        ),
        "entry_point": "percentile",
        "code": """\
def percentile(values, p):
    if not values: raise ValueError("values must not be empty")
    if p < 0 or p > 100: raise ValueError("p must be in [0, 100]")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    lower = int(rank)
    upper = min(lower + 1, len(ordered) - 1)
    fraction = rank - lower
    return ordered[lower] + (ordered[upper] - ordered[lower]) * fraction
""",
        "tests": [
            "assert abs(percentile([1, 2, 3, 4, 5], 50) - 3) < 1e-9",
            "assert abs(percentile([1, 2, 3, 4], 50) - 2.5) < 1e-9",
            "assert abs(percentile([10], 90) - 10) < 1e-9",
            "assert abs(percentile([3, 1, 2], 0) - 1) < 1e-9",
            "assert abs(percentile([3, 1, 2], 100) - 3) < 1e-9",
            "assert abs(percentile([0, 10], 25) - 2.5) < 1e-9",
            "assert abs(percentile([5, 1, 9, 3], 75) - 6) < 1e-9",
            "try:\n    percentile([], 50)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    percentile([1, 2], 101)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    percentile([1, 2], -1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "math_numerical_07",
        "domain": "math_numerical",
        "query": (
            "Modular exponentiation: compute base to the power exponent modulo modulus by "
            "repeated squaring. Any number modulo 1 is 0; raises ValueError for a negative "
            "exponent or a modulus below 1."
        ),
        "entry_point": "mod_pow",
        "code": """\
def mod_pow(base, exponent, modulus):
    if modulus < 1: raise ValueError("modulus must be positive")
    if exponent < 0: raise ValueError("exponent must be non-negative")
    if modulus == 1: return 0
    result = 1
    base %= modulus
    while exponent > 0:
        if exponent % 2 == 1:
            result = result * base % modulus
        base = base * base % modulus
        exponent //= 2
    return result
""",
        "tests": [
            "assert mod_pow(2, 10, 1000) == 24",
            "assert mod_pow(3, 0, 7) == 1",
            "assert mod_pow(7, 1, 13) == 7",
            "assert mod_pow(2, 5, 3) == 2",
            "assert mod_pow(4, 13, 497) == 445",
            "assert mod_pow(-2, 3, 5) == 2",
            "assert mod_pow(5, 0, 1) == 0",
            "assert mod_pow(10, 18, 7) == pow(10, 18, 7)",
            "try:\n    mod_pow(2, -1, 5)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    mod_pow(2, 3, 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
]
