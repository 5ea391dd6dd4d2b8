"""Built-in tasks of the `state_machines` domain: automata, event-driven machines and scanners."""

TASKS: list[dict[str, object]] = [
    {
        "id": "state_machines_01",
        "domain": "state_machines",
        "query": (
            "Run a deterministic finite automaton over a string: transitions is a dict mapping "
            "each state to a dict from input symbol to next state. Return True if the run ends "
            "in one of the accepting states; a missing transition rejects the input."
        ),
        "entry_point": "dfa_accepts",
        "code": """\
def dfa_accepts(transitions, start, accepting, text):
    state = start
    for symbol in text:
        next_states = transitions.get(state, {})
        if symbol not in next_states: return False
        state = next_states[symbol]
    return state in accepting
""",
        "tests": [
            "assert dfa_accepts(PARITY, 'e', {'e'}, 'abab') is True",
            "assert dfa_accepts(PARITY, 'e', {'e'}, 'ab') is False",
            "assert dfa_accepts(PARITY, 'e', {'e'}, '') is True",
            "assert dfa_accepts(PARITY, 'o', {'e'}, '') is False",
            "assert dfa_accepts(PARITY, 'o', {'e'}, 'a') is True",
            "assert dfa_accepts(PARITY, 'e', {'e'}, 'abc') is False",
            "assert dfa_accepts({'s': {'x': 't'}, 't': {}}, 's', {'t'}, 'x') is True",
            "assert dfa_accepts({'s': {'x': 't'}, 't': {}}, 's', {'t'}, 'xx') is False",
            "assert dfa_accepts({'s': {'x': 't'}}, 's', {'t'}, 'xy') is False",
        ],
        "setup": "PARITY = {'e': {'a': 'o', 'b': 'e'}, 'o': {'a': 'e', 'b': 'o'}}",
    },
    {
        "id": "state_machines_02",
        "domain": "state_machines",
        "query": (
            "Simulate a coin-operated turnstile that starts locked: 'coin' unlocks it, 'push' "
            "on an unlocked turnstile lets one person through and locks it again, other "
            "combinations change nothing. Return (final_state, passes); raises ValueError for "
            "an unknown event."
        ),
        "entry_point": "turnstile",
        "code": """\
def turnstile(events):
    state = "locked"
    passes = 0
    for event in events:
        if event not in ("coin", "push"): raise ValueError(f"unknown event: {event!r}")
        if state == "locked" and event == "coin":
            state = "unlocked"
        elif state == "unlocked" and event == "push":
            state = "locked"
            passes += 1
    return (state, passes)
""",
        "tests": [
            "assert turnstile([]) == ('locked', 0)",
            "assert turnstile(['coin']) == ('unlocked', 0)",
            "assert turnstile(['coin', 'push']) == ('locked', 1)",
            "assert turnstile(['push', 'push']) == ('locked', 0)",
            "assert turnstile(['coin', 'coin', 'push', 'push']) == ('locked', 1)",
            "assert turnstile(['coin', 'push', 'coin', 'push', 'coin']) == ('unlocked', 2)",
            "try:\n    turnstile(['coin', 'kick'])\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "state_machines_03",
        "domain": "state_machines",
        "query": (
            "Split one CSV line into fields with a character-level state machine: commas "
            "separate fields, double-quoted fields may contain commas, and a doubled quote "
            "inside quotes is a literal quote. An empty line gives one empty field; raises "
            "ValueError for an unterminated quoted field."
        ),
        "entry_point": "split_csv_line",
        "code": """\
def split_csv_line(line):
    fields, current = [], []
    in_quotes = False
    i = 0
    while i < len(line):
        ch = line[i]
        if in_quotes:
            if ch == '"' and i + 1 < len(line) and line[i + 1] == '"':
                current.append('"')
                i += 1
            elif ch == '"':
                in_quotes = False
            else:
                current.append(ch)
        elif ch == '"':
            in_quotes = True
        elif ch == ",":
            fields.append("".join(current))
            current = []
        else:
            current.append(ch)
        i += 1
    if in_quotes: raise ValueError("unterminated quoted field")
    fields.append("".join(current))
    return fields
""",
        "tests": [
            "assert split_csv_line('a,b,c') == ['a', 'b', 'c']",
            "assert split_csv_line('') == ['']",
            "assert split_csv_line('a,,b,') == ['a', '', 'b', '']",
            "assert split_csv_line('\"x,y\",z') == ['x,y', 'z']",
            'assert split_csv_line(\'"he said ""hi""",2\') == [\'he said "hi"\', \'2\']',
            "assert split_csv_line('\"\"') == ['']",
            'assert split_csv_line(\'""""\') == [\'"\']',
            "assert split_csv_line('one') == ['one']",
            "try:\n    split_csv_line('a,\"b')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "state_machines_04",
        "domain": "state_machines",
        "query": (
            "Replay (operation, amount) pairs against a bank account that starts open with "
            "balance 0: deposit and withdraw only while open, freeze and unfreeze toggle the "
            "frozen state, close ends it. Return (state, balance); raises ValueError for an "
            "overdraft, any operation after close, or an operation not allowed in the state."
        ),
        "entry_point": "run_account",
        "code": """\
def run_account(operations):
    state, balance = "open", 0
    for op, amount in operations:
        if state == "closed": raise ValueError("account is closed")
        if op == "deposit" and state == "open":
            balance += amount
        elif op == "withdraw" and state == "open":
            if amount > balance: raise ValueError("insufficient funds")
            balance -= amount
        elif op == "freeze":
            state = "frozen"
        elif op == "unfreeze":
            state = "open"
        elif op == "close":
            state = "closed"
        else:
            raise ValueError(f"operation {op!r} not allowed while {state}")
    return (state, balance)
""",
        "tests": [
            "assert run_account([]) == ('open', 0)",
            "assert run_account([('deposit', 50), ('withdraw', 20)]) == ('open', 30)",
            "assert run_account([('deposit', 50), ('withdraw', 50)]) == ('open', 0)",
            "assert run_account([('deposit', 10), ('freeze', 0)]) == ('frozen', 10)",
            "assert run_account([('freeze', 0), ('unfreeze', 0), ('deposit', 5)]) == ('open', 5)",
            "assert run_account([('deposit', 7), ('close', 0)]) == ('closed', 7)",
            "try:\n    run_account([('deposit', 10), ('withdraw', 11)])\nexcept ValueError:\n"
            "    pass\nelse:\n    raise AssertionError('expected ValueError')",
            "try:\n    run_account([('close', 0), ('deposit', 1)])\nexcept ValueError:\n"
            "    pass\nelse:\n    raise AssertionError('expected ValueError')",
            "try:\n    run_account([('close', 0), ('unfreeze', 0)])\nexcept ValueError:\n"
            "    pass\nelse:\n    raise AssertionError('expected ValueError')",
            "try:\n    run_account([('freeze', 0), ('deposit', 1)])\nexcept ValueError:\n"
            "    pass\nelse:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "state_machines_05",
        "domain": "state_machines",
        "query": (
            "Scan a string and extract every run of decimal digits as an integer, in order; a "
            "minus sign directly before a run makes it negative. Returns an empty list when "
            "the text has no digits."
        ),
        "entry_point": "extract_integers",
        "code": """\
def extract_integers(text):
    numbers, digits = [], ""
    negative = False
    for i, ch in enumerate(text):
        if ch.isdigit():
            if not digits: negative = i > 0 and text[i - 1] == "-"
            digits += ch
        elif digits:
            numbers.append(-int(digits) if negative else int(digits))
            digits = ""
    if digits: numbers.append(-int(digits) if negative else int(digits))
    return numbers
""",
        "tests": [
            "assert extract_integers('a1b22c333') == [1, 22, 333]",
            "assert extract_integers('x-5 y') == [-5]",
            "assert extract_integers('-7 degrees') == [-7]",
            "assert extract_integers('3 and -') == [3]",
            "assert extract_integers('12') == [12]",
            "assert extract_integers('5-3') == [5, -3]",
            "assert extract_integers('--3') == [-3]",
            "assert extract_integers('- 4') == [4]",
            "assert extract_integers('abc') == []",
            "assert extract_integers('') == []",
            "assert extract_integers('7 apples, 10 pears') == [7, 10]",
        ],
        "setup": "",
    },
    {
        "id": "state_machines_06",
        "domain": "state_machines",
        "query": (
            "Traffic light cycling green, then yellow, then red, with the given durations in "
            "seconds, starting green at time 0: return the colour shown at time t. Raises "
            "ValueError for negative t or any duration that is not positive."
        ),
        "entry_point": "light_at",
        "code": """\
def light_at(t, green, yellow, red):
    if t < 0: raise ValueError("t must be non-negative")
    if min(green, yellow, red) <= 0: raise ValueError("durations must be positive")
    position = t % (green + yellow + red)
    if position < green: return "green"
    if position < green + yellow: return "yellow"
    return "red"
""",
        "tests": [
            "assert light_at(0, 3, 1, 2) == 'green'",
            "assert light_at(2, 3, 1, 2) == 'green'",
            "assert light_at(3, 3, 1, 2) == 'yellow'",
            "assert light_at(4, 3, 1, 2) == 'red'",
            "assert light_at(5, 3, 1, 2) == 'red'",
            "assert light_at(6, 3, 1, 2) == 'green'",
            "assert light_at(9, 3, 1, 2) == 'yellow'",
            "assert light_at(1, 1, 3, 2) == 'yellow'",
            "try:\n    light_at(-1, 3, 1, 2)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    light_at(1, 3, 0, 2)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "state_machines_07",
        "domain": "state_machines",
        "query": (
            "Check whether the brackets (), [] and {} in a string are balanced and properly "
            "nested using a stack, ignoring all other characters. A closing bracket with "
            "nothing open returns False; an empty string is balanced."
        ),
        "entry_point": "is_balanced",
        "code": """\
def is_balanced(text):
    pairs = {")": "(", "]": "[", "}": "{"}
    stack = []
    for ch in text:
        if ch in "([{":
            stack.append(ch)
        elif ch in pairs:
            if not stack or stack[-1] != pairs[ch]: return False
            stack.pop()
    return not stack
""",
        "tests": [
            "assert is_balanced('') is True",
            "assert is_balanced('()') is True",
            "assert is_balanced('a(b[c]{d}e)f') is True",
            "assert is_balanced('([)]') is False",
            "assert is_balanced('((') is False",
            "assert is_balanced(')(') is False",
            "assert is_balanced(']') is False",
            "assert is_balanced('{[()()]}') is True",
            "assert is_balanced('no brackets') is True",
        ],
        "setup": "",
    },
]
