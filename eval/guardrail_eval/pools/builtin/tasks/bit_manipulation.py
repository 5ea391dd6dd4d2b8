"""Built-in tasks of the `bit_manipulation` domain: shifts, masks and bit counting on integers."""

TASKS: list[dict[str, object]] = [
    {
        "id": "bit_manipulation_01",
        "domain": "bit_manipulation",
        "query": (
            "Count the 1 bits in the binary representation of a non-negative integer (its "
            "population count). Returns 0 for 0 and raises ValueError for a negative number."
        ),
        "entry_point": "count_set_bits",
        "code": """\
def count_set_bits(n):
    if n < 0: raise ValueError("n must be non-negative")
    count = 0
    for i in range(n.bit_length()):
        if (n >> i) & 1 == 1:
            count += 1
    return count
""",
        "tests": [
            "assert count_set_bits(0) == 0",
            "assert count_set_bits(1) == 1",
            "assert count_set_bits(2) == 1",
            "assert count_set_bits(7) == 3",
            "assert count_set_bits(0b10110110) == 5",
            "assert count_set_bits(2**40 - 1) == 40",
            "assert count_set_bits(2**40) == 1",
            "try:\n    count_set_bits(-1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "bit_manipulation_02",
        "domain": "bit_manipulation",
        "query": (
            "Reverse the order of the lowest `width` bits of a non-negative integer, so bit 0 "
            "becomes bit width-1. Raises ValueError when the number is negative or does not "
            "fit in `width` bits."
        ),
        "entry_point": "reverse_bits",
        "code": """\
def reverse_bits(n, width):
    if n < 0 or n >= 1 << width: raise ValueError("n does not fit in width bits")
    result = 0
    for i in range(width):
        if (n >> i) & 1:
            result |= 1 << (width - 1 - i)
    return result
""",
        "tests": [
            "assert reverse_bits(1, 4) == 8",
            "assert reverse_bits(0b1011, 4) == 0b1101",
            "assert reverse_bits(0b00000110, 8) == 0b01100000",
            "assert reverse_bits(0b110, 3) == 0b011",
            "assert reverse_bits(0b101, 3) == 0b101",
            "assert reverse_bits(0, 5) == 0",
            "assert reverse_bits(255, 8) == 255",
            "try:\n    reverse_bits(-1, 4)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    reverse_bits(16, 4)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "bit_manipulation_03",
        "domain": "bit_manipulation",
        "query": (
            "Return an integer with the bit at a given index set to 1 or cleared to 0, leaving "
            "the other bits unchanged. Raises ValueError when the value is not 0 or 1."
        ),
        "entry_point": "set_bit",
        "code": """\
def set_bit(n, index, value):
    if value not in (0, 1): raise ValueError("value must be 0 or 1")
    mask = 1 << index
    if value == 1:
        return n | mask
    return n & ~mask
""",
        "tests": [
            "assert set_bit(0, 0, 1) == 1",
            "assert set_bit(0, 3, 1) == 8",
            "assert set_bit(15, 0, 0) == 14",
            "assert set_bit(8, 3, 0) == 0",
            "assert set_bit(5, 1, 1) == 7",
            "assert set_bit(5, 2, 1) == 5",
            "assert set_bit(5, 1, 0) == 5",
            "try:\n    set_bit(5, 1, 2)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "bit_manipulation_04",
        "domain": "bit_manipulation",
        "query": (
            "Convert a list of bits to an integer, most significant bit first by default or "
            "least significant first when lsb_first is true. An empty list gives 0; raises "
            "ValueError when an element is not 0 or 1."
        ),
        "entry_point": "bits_to_int",
        "code": """\
def bits_to_int(bits, lsb_first=False):
    ordered = bits[::-1] if lsb_first else bits
    value = 0
    for bit in ordered:
        if bit not in (0, 1): raise ValueError(f"not a bit: {bit!r}")
        value = value * 2 + bit
    return value
""",
        "tests": [
            "assert bits_to_int([]) == 0",
            "assert bits_to_int([1]) == 1",
            "assert bits_to_int([1, 0]) == 2",
            "assert bits_to_int([1, 0, 1, 1]) == 11",
            "assert bits_to_int([0, 0, 1]) == 1",
            "assert bits_to_int([1, 0, 0], lsb_first=True) == 1",
            "assert bits_to_int([0, 1, 1, 0, 1], lsb_first=True) == 22",
            "try:\n    bits_to_int([1, 2, 0])\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "bit_manipulation_05",
        "domain": "bit_manipulation",
        "query": (
            "Extract a bit field: return the `length` bits of an integer starting at bit "
            "position `start` (bit 0 is the least significant) as a new integer. A length of 0 "
            "gives 0; raises ValueError for a negative start or length."
        ),
        "entry_point": "extract_bits",
        "code": """\
def extract_bits(n, start, length):
    if start < 0 or length < 0: raise ValueError("start and length must be non-negative")
    result = 0
    for i in range(length):
        bit = (n >> (start + i)) & 1
        result |= bit << i
    return result
""",
        "tests": [
            "assert extract_bits(0b110110, 1, 3) == 0b011",
            "assert extract_bits(0xABCD, 4, 8) == 0xBC",
            "assert extract_bits(0xABCD, 0, 4) == 0xD",
            "assert extract_bits(0xABCD, 12, 4) == 0xA",
            "assert extract_bits(0xFF, 0, 8) == 255",
            "assert extract_bits(255, 3, 0) == 0",
            "assert extract_bits(1, 5, 3) == 0",
            "try:\n    extract_bits(5, 0, -1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "bit_manipulation_06",
        "domain": "bit_manipulation",
        "query": (
            "Pack red, green and blue colour components (each 0-255) into one 24-bit integer "
            "0xRRGGBB. Raises ValueError when a component is outside 0-255."
        ),
        "entry_point": "pack_rgb",
        "code": """\
def pack_rgb(red, green, blue):
    for component in (red, green, blue):
        if not 0 <= component <= 255: raise ValueError(f"component out of range: {component}")
    packed = red << 16
    packed |= green << 8
    packed |= blue
    return packed
""",
        "tests": [
            "assert pack_rgb(0, 0, 0) == 0",
            "assert pack_rgb(255, 255, 255) == 0xFFFFFF",
            "assert pack_rgb(255, 0, 0) == 0xFF0000",
            "assert pack_rgb(0, 255, 0) == 0x00FF00",
            "assert pack_rgb(0, 0, 1) == 1",
            "assert pack_rgb(0x12, 0x34, 0x56) == 0x123456",
            "try:\n    pack_rgb(256, 0, 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    pack_rgb(0, -1, 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "bit_manipulation_07",
        "domain": "bit_manipulation",
        "query": (
            "Count the trailing zero bits of a non-negative integer within a word of `width` "
            "bits (32 by default). Returns the width when no bit below it is set, including for "
            "0; raises ValueError for a negative number."
        ),
        "entry_point": "count_trailing_zeros",
        "code": """\
def count_trailing_zeros(n, width=32):
    if n < 0: raise ValueError("n must be non-negative")
    for i in range(width):
        if (n >> i) & 1:
            return i
    return width
""",
        "tests": [
            "assert count_trailing_zeros(1) == 0",
            "assert count_trailing_zeros(8) == 3",
            "assert count_trailing_zeros(12) == 2",
            "assert count_trailing_zeros(2**31) == 31",
            "assert count_trailing_zeros(0) == 32",
            "assert count_trailing_zeros(0, 8) == 8",
            "assert count_trailing_zeros(256, 8) == 8",
            "try:\n    count_trailing_zeros(-1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
]
