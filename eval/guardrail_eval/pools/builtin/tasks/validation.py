"""Built-in tasks of the `validation` domain: checking identifiers, numbers and records."""

TASKS: list[dict[str, object]] = [
    {
        "id": "validation_01",
        "domain": "validation",
        "query": (
            "Validate a dotted-quad IPv4 address string: exactly four parts separated by dots, "
            "each made of ASCII digits only, between 0 and 255, without leading zeros. Returns "
            "True or False and never raises."
        ),
        "entry_point": "is_valid_ipv4",
        "code": """\
def is_valid_ipv4(address):
    parts = address.split(".")
    if len(parts) != 4: return False
    for part in parts:
        if not part.isdigit() or not part.isascii(): return False
        if len(part) > 1 and part[0] == "0": return False
        if int(part) > 255: return False
    return True
""",
        "tests": [
            "assert is_valid_ipv4('192.168.1.1') is True",
            "assert is_valid_ipv4('0.0.0.0') is True",
            "assert is_valid_ipv4('255.255.255.255') is True",
            "assert is_valid_ipv4('256.1.1.1') is False",
            "assert is_valid_ipv4('1.2.3') is False",
            "assert is_valid_ipv4('1.2.3.4.5') is False",
            "assert is_valid_ipv4('01.2.3.4') is False",
            "assert is_valid_ipv4('1..3.4') is False",
            "assert is_valid_ipv4('1.2.3.-4') is False",
            "assert is_valid_ipv4('10.0.0.10') is True",
        ],
        "setup": "",
    },
    {
        "id": "validation_02",
        "domain": "validation",
        "query": (
            "Check a card or account number with the Luhn checksum. Spaces are ignored; the "
            "number must then consist of at least two digits, otherwise the result is False."
        ),
        "entry_point": "luhn_valid",
        "code": """\
def luhn_valid(number):
    digits = number.replace(" ", "")
    if len(digits) < 2 or not digits.isdigit(): return False
    total = 0
    for i, ch in enumerate(reversed(digits)):
        value = int(ch)
        if i % 2 == 1:
            value *= 2
            if value > 9: value -= 9
        total += value
    return total % 10 == 0
""",
        "tests": [
            "assert luhn_valid('4539 3195 0343 6467') is True",
            "assert luhn_valid('8273 1232 7352 0569') is False",
            "assert luhn_valid('4111111111111111') is True",
            "assert luhn_valid('4111111111111112') is False",
            "assert luhn_valid('059') is True",
            "assert luhn_valid('18') is True",
            "assert luhn_valid('0') is False",
            "assert luhn_valid(' 0') is False",
            "assert luhn_valid('055a 444 285') is False",
            "assert luhn_valid('00') is True",
        ],
        "setup": "",
    },
    {
        "id": "validation_03",
        "domain": "validation",
        "query": (
            "Check a password against a policy and return the list of problems in this order: "
            "'too short' (fewer than min_length characters), 'no digit', 'no uppercase', "
            "'no lowercase'; an empty list means it is valid. Raises ValueError when "
            "min_length is less than 1."
        ),
        "entry_point": "password_problems",
        "code": """\
def password_problems(password, min_length=8):
    if min_length < 1: raise ValueError("min_length must be at least 1")
    problems = []
    if len(password) < min_length: problems.append("too short")
    if not any(ch.isdigit() for ch in password): problems.append("no digit")
    if not any(ch.isupper() for ch in password): problems.append("no uppercase")
    if not any(ch.islower() for ch in password): problems.append("no lowercase")
    return problems
""",
        "tests": [
            "assert password_problems('Secret123') == []",
            "assert password_problems('Abcdef1') == ['too short']",
            "assert password_problems('Abcdefg1') == []",
            "assert password_problems('abcdefgh') == ['no digit', 'no uppercase']",
            "assert password_problems('ABCDEFG1') == ['no lowercase']",
            "assert password_problems('') == "
            "['too short', 'no digit', 'no uppercase', 'no lowercase']",
            "assert password_problems('aB3', min_length=3) == []",
            "assert password_problems('aB3', 4) == ['too short']",
            "assert password_problems('aB3', 1) == []",
            "try:\n    password_problems('Secret123', 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "validation_04",
        "domain": "validation",
        "query": (
            "Validate an email address with simple structural rules: exactly one '@'; a local "
            "part of 1 to 64 characters that does not start or end with a dot or contain two "
            "dots in a row; a domain of at least two dot-separated labels of letters, digits "
            "and hyphens (1 to 63 characters, no leading or trailing hyphen) whose last label "
            "is at least two letters."
        ),
        "entry_point": "is_valid_email",
        "code": """\
def is_valid_email(address):
    if address.count("@") != 1: return False
    local, domain = address.split("@")
    if not local or len(local) > 64: return False
    if local[0] == "." or local[-1] == "." or ".." in local: return False
    labels = domain.split(".")
    if len(labels) < 2: return False
    for label in labels:
        if not label or len(label) > 63: return False
        if label[0] == "-" or label[-1] == "-": return False
        if not all(ch.isalnum() or ch == "-" for ch in label): return False
    return len(labels[-1]) >= 2 and labels[-1].isalpha()
""",
        "tests": [
            "assert is_valid_email('user@example.com') is True",
            "assert is_valid_email('first.last+tag@mail.example.org') is True",
            "assert is_valid_email('a@b.co') is True",
            "assert is_valid_email('a@b.c') is False",
            "assert is_valid_email('user@localhost') is False",
            "assert is_valid_email('@example.com') is False",
            "assert is_valid_email('a@@example.com') is False",
            "assert is_valid_email('.user@example.com') is False",
            "assert is_valid_email('us..er@example.com') is False",
            "assert is_valid_email('user@-example.com') is False",
            "assert is_valid_email('user@example..com') is False",
            "assert is_valid_email('x' * 64 + '@example.com') is True",
            "assert is_valid_email('x' * 65 + '@example.com') is False",
            "assert is_valid_email('user@exa_mple.com') is False",
            "assert is_valid_email('user.@example.com') is False",
            "assert is_valid_email('user@example-.com') is False",
            "assert is_valid_email('user@web1.io') is True",
            "assert is_valid_email('u@' + 'd' * 63 + '.com') is True",
            "assert is_valid_email('u@' + 'd' * 64 + '.com') is False",
        ],
        "setup": "",
    },
    {
        "id": "validation_05",
        "domain": "validation",
        "query": (
            "Parse a TCP port number from a string, ignoring surrounding whitespace, and "
            "return it as an int. Raises ValueError for an empty string, anything that is not "
            "plain decimal digits, or a number outside 1 to 65535."
        ),
        "entry_point": "parse_port",
        "code": """\
def parse_port(text):
    text = text.strip()
    if not text: raise ValueError("port is empty")
    if not text.isdigit() or not text.isascii(): raise ValueError(f"{text!r} is not a number")
    port = int(text)
    if port < 1 or port > 65535: raise ValueError(f"port {port} out of range 1-65535")
    return port
""",
        "tests": [
            "assert parse_port('80') == 80",
            "assert parse_port(' 8080 ') == 8080",
            "assert parse_port('1') == 1",
            "assert parse_port('65535') == 65535",
            "try:\n    parse_port('0')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    parse_port('65536')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    parse_port('  ')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    parse_port('-1')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    parse_port('+80')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    parse_port('8_080')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    parse_port('8o')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "validation_06",
        "domain": "validation",
        "query": (
            "Validate an ISBN-10 code: hyphens are ignored, then there must be exactly ten "
            "characters, digits except that the last may be 'X' for ten, and the sum of each "
            "value times its weight (10 down to 1) must be divisible by 11."
        ),
        "entry_point": "is_valid_isbn10",
        "code": """\
def is_valid_isbn10(code):
    chars = code.replace("-", "")
    if len(chars) != 10: return False
    total = 0
    for i, ch in enumerate(chars):
        if ch == "X" and i == 9:
            value = 10
        elif ch.isdigit():
            value = int(ch)
        else:
            return False
        total += (10 - i) * value
    return total % 11 == 0
""",
        "tests": [
            "assert is_valid_isbn10('0-306-40615-2') is True",
            "assert is_valid_isbn10('0306406152') is True",
            "assert is_valid_isbn10('0306406153') is False",
            "assert is_valid_isbn10('0-8044-2957-X') is True",
            "assert is_valid_isbn10('X-8044-2957-0') is False",
            "assert is_valid_isbn10('030640615') is False",
            "assert is_valid_isbn10('03064061522') is False",
            "assert is_valid_isbn10('0306A06152') is False",
            "assert is_valid_isbn10('') is False",
        ],
        "setup": "",
    },
    {
        "id": "validation_07",
        "domain": "validation",
        "query": (
            "Check a record dict against a schema dict mapping field names to type names "
            "('int', 'float', 'str', 'bool', 'list') and return error strings in field-name "
            "order: 'name: missing' or 'name: expected type'; booleans do not count as ints. "
            "Extra fields are ignored; raises ValueError for an unknown type name."
        ),
        "entry_point": "schema_errors",
        "code": """\
def schema_errors(record, schema):
    types = {"int": int, "float": float, "str": str, "bool": bool, "list": list}
    errors = []
    for field in sorted(schema):
        expected = schema[field]
        if expected not in types: raise ValueError(f"unknown type {expected!r} for {field!r}")
        if field not in record:
            errors.append(f"{field}: missing")
            continue
        value = record[field]
        wrong_bool = isinstance(value, bool) and expected != "bool"
        if wrong_bool or not isinstance(value, types[expected]):
            errors.append(f"{field}: expected {expected}")
    return errors
""",
        "tests": [
            "assert schema_errors({'a': 1}, {'a': 'int'}) == []",
            "assert schema_errors({'a': 'x'}, {'a': 'int'}) == ['a: expected int']",
            "assert schema_errors({}, {'a': 'int'}) == ['a: missing']",
            "assert schema_errors({'a': True}, {'a': 'int'}) == ['a: expected int']",
            "assert schema_errors({'a': True}, {'a': 'bool'}) == []",
            "assert schema_errors({'a': 1, 'extra': 2}, {'a': 'int'}) == []",
            "assert schema_errors({'a': 1}, {}) == []",
            "assert schema_errors({'b': 1.5, 'a': [1]}, {'b': 'float', 'a': 'list', 'c': 'str'}) "
            "== ['c: missing']",
            "assert schema_errors({'z': 1, 'y': 2}, {'z': 'str', 'y': 'str'}) "
            "== ['y: expected str', 'z: expected str']",
            "try:\n    schema_errors({'a': 1}, {'a': 'integer'})\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
]
