"""Built-in tasks of the `string_processing` domain: encoding, wrapping, matching, editing."""

TASKS: list[dict[str, object]] = [
    {
        "id": "string_processing_01",
        "domain": "string_processing",
        "query": (
            "Run-length encode a string: each run of a repeated character becomes the "
            "character followed by the run length, with the count omitted for runs of length "
            "one (so 'aaabcc' becomes 'a3bc2'). Returns an empty string for empty input."
        ),
        "entry_point": "run_length_encode",
        "code": """\
def run_length_encode(text):
    if not text: return ""
    out = []
    current, count = text[0], 1
    for ch in text[1:]:
        if ch == current:
            count += 1
        else:
            out.append(current + (str(count) if count > 1 else ""))
            current, count = ch, 1
    out.append(current + (str(count) if count > 1 else ""))
    return "".join(out)
""",
        "tests": [
            "assert run_length_encode('aaabcc') == 'a3bc2'",
            "assert run_length_encode('') == ''",
            "assert run_length_encode('a') == 'a'",
            "assert run_length_encode('aa') == 'a2'",
            "assert run_length_encode('abc') == 'abc'",
            "assert run_length_encode('aabbbba') == 'a2b4a'",
            "assert run_length_encode('zzzzzzzzzzzz') == 'z12'",
            "assert run_length_encode('  x') == ' 2x'",
        ],
        "setup": "",
    },
    {
        "id": "string_processing_02",
        "domain": "string_processing",
        "query": (
            "Greedy word wrap: split text into lines of at most width characters, breaking "
            "only at whitespace and joining words with single spaces; a word longer than the "
            "width goes on its own line. Returns an empty list for blank text and raises "
            "ValueError when width is less than 1."
        ),
        "entry_point": "wrap_text",
        "code": """\
def wrap_text(text, width):
    if width < 1: raise ValueError("width must be at least 1")
    lines, current = [], ""
    for word in text.split():
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current: lines.append(current)
    return lines
""",
        "tests": [
            "assert wrap_text('the quick brown fox', 10) == ['the quick', 'brown fox']",
            "assert wrap_text('the quick brown fox', 9) == ['the quick', 'brown fox']",
            "assert wrap_text('the quick brown fox', 8) == ['the', 'quick', 'brown', 'fox']",
            "assert wrap_text('a b c d', 3) == ['a b', 'c d']",
            "assert wrap_text('extraordinary word', 5) == ['extraordinary', 'word']",
            "assert wrap_text('  spaced   out  ', 20) == ['spaced out']",
            "assert wrap_text('', 5) == []",
            "assert wrap_text('single', 1) == ['single']",
            "try:\n    wrap_text('abc', 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "string_processing_03",
        "domain": "string_processing",
        "query": (
            "Longest common prefix shared by all strings in a list. Returns an empty string "
            "for an empty list or when the strings share no prefix."
        ),
        "entry_point": "longest_common_prefix",
        "code": """\
def longest_common_prefix(words):
    if not words: return ""
    prefix = words[0]
    for word in words[1:]:
        end = 0
        while end < len(prefix) and end < len(word) and prefix[end] == word[end]:
            end += 1
        prefix = prefix[:end]
    return prefix
""",
        "tests": [
            "assert longest_common_prefix(['flower', 'flow', 'flight']) == 'fl'",
            "assert longest_common_prefix(['dog', 'racecar', 'car']) == ''",
            "assert longest_common_prefix(['same', 'same']) == 'same'",
            "assert longest_common_prefix(['alone']) == 'alone'",
            "assert longest_common_prefix([]) == ''",
            "assert longest_common_prefix(['ab', 'a']) == 'a'",
            "assert longest_common_prefix(['a', 'ab']) == 'a'",
            "assert longest_common_prefix(['prefix', '']) == ''",
            "assert longest_common_prefix(['interview', 'internet', 'interval']) == 'inter'",
        ],
        "setup": "",
    },
    {
        "id": "string_processing_04",
        "domain": "string_processing",
        "query": (
            "Count how many times a substring occurs in a text, either without overlaps "
            "(the default, scanning left to right) or with overlapping matches allowed. "
            "Raises ValueError for an empty substring."
        ),
        "entry_point": "count_occurrences",
        "code": """\
def count_occurrences(text, sub, overlapping=False):
    if not sub: raise ValueError("sub must not be empty")
    count, next_free = 0, 0
    for i in range(len(text) - len(sub) + 1):
        if i >= next_free and text[i : i + len(sub)] == sub:
            count += 1
            next_free = i + 1 if overlapping else i + len(sub)
    return count
""",
        "tests": [
            "assert count_occurrences('aaaa', 'aa') == 2",
            "assert count_occurrences('aaaa', 'aa', overlapping=True) == 3",
            "assert count_occurrences('abcabc', 'abc') == 2",
            "assert count_occurrences('abcabc', 'abc', True) == 2",
            "assert count_occurrences('abc', 'abc') == 1",
            "assert count_occurrences('ab', 'abc') == 0",
            "assert count_occurrences('hello', 'l') == 2",
            "assert count_occurrences('', 'a') == 0",
            "try:\n    count_occurrences('abc', '')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "string_processing_05",
        "domain": "string_processing",
        "query": (
            "Convert a camelCase or PascalCase identifier to snake_case, keeping acronyms "
            "together (parseHTTPResponse becomes parse_http_response) and treating digits as "
            "part of the preceding word. Returns an empty string for empty input."
        ),
        "entry_point": "camel_to_snake",
        "code": """\
def camel_to_snake(name):
    if not name: return ""
    out = [name[0].lower()]
    for i in range(1, len(name)):
        ch = name[i]
        if ch.isupper():
            after_word = name[i - 1].islower() or name[i - 1].isdigit()
            ends_acronym = i + 1 < len(name) and name[i + 1].islower()
            if after_word or (ends_acronym and name[i - 1].isupper()): out.append("_")
            out.append(ch.lower())
        else:
            out.append(ch)
    return "".join(out)
""",
        "tests": [
            "assert camel_to_snake('camelCase') == 'camel_case'",
            "assert camel_to_snake('PascalCase') == 'pascal_case'",
            "assert camel_to_snake('parseHTTPResponse') == 'parse_http_response'",
            "assert camel_to_snake('HTTPServer') == 'http_server'",
            "assert camel_to_snake('getX') == 'get_x'",
            "assert camel_to_snake('setXValue') == 'set_x_value'",
            "assert camel_to_snake('ABc') == 'a_bc'",
            "assert camel_to_snake('version2Update') == 'version2_update'",
            "assert camel_to_snake('simple') == 'simple'",
            "assert camel_to_snake('A') == 'a'",
            "assert camel_to_snake('') == ''",
        ],
        "setup": "",
    },
    {
        "id": "string_processing_06",
        "domain": "string_processing",
        "query": (
            "Levenshtein edit distance between two strings: the minimum number of single "
            "character insertions, deletions and substitutions turning one into the other, "
            "computed with a rolling dynamic-programming row. The distance to an empty string "
            "is the other string's length."
        ),
        "entry_point": "edit_distance",
        "code": """\
def edit_distance(a, b):
    if not a: return len(b)
    previous = list(range(len(b) + 1))
    for i in range(1, len(a) + 1):
        current = [i] + [0] * len(b)
        for j in range(1, len(b) + 1):
            cost = 0 if a[i - 1] == b[j - 1] else 1
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
        previous = current
    return previous[len(b)]
""",
        "tests": [
            "assert edit_distance('kitten', 'sitting') == 3",
            "assert edit_distance('flaw', 'lawn') == 2",
            "assert edit_distance('', 'abc') == 3",
            "assert edit_distance('abc', '') == 3",
            "assert edit_distance('', '') == 0",
            "assert edit_distance('same', 'same') == 0",
            "assert edit_distance('a', 'b') == 1",
            "assert edit_distance('ab', 'ba') == 2",
            "assert edit_distance('abc', 'ac') == 1",
            "assert edit_distance('ac', 'abc') == 1",
            "assert edit_distance('intention', 'execution') == 5",
        ],
        "setup": "",
    },
    {
        "id": "string_processing_07",
        "domain": "string_processing",
        "query": (
            "Find every start index in a text where an anagram (permutation) of a pattern "
            "begins, using a sliding window of character counts. Returns an empty list when "
            "the pattern is empty or longer than the text."
        ),
        "entry_point": "anagram_indices",
        "code": """\
def anagram_indices(text, pattern):
    m = len(pattern)
    if m == 0 or m > len(text): return []
    need, window = {}, {}
    for ch in pattern:
        need[ch] = need.get(ch, 0) + 1
    result = []
    for i, ch in enumerate(text):
        window[ch] = window.get(ch, 0) + 1
        if i >= m:
            old = text[i - m]
            window[old] -= 1
            if window[old] == 0: del window[old]
        if window == need: result.append(i - m + 1)
    return result
""",
        "tests": [
            "assert anagram_indices('cbaebabacd', 'abc') == [0, 6]",
            "assert anagram_indices('abab', 'ab') == [0, 1, 2]",
            "assert anagram_indices('abc', 'abc') == [0]",
            "assert anagram_indices('aaa', 'a') == [0, 1, 2]",
            "assert anagram_indices('ab', 'abc') == []",
            "assert anagram_indices('abc', '') == []",
            "assert anagram_indices('', 'a') == []",
            "assert anagram_indices('xyz', 'ab') == []",
            "assert anagram_indices('baa', 'aa') == [1]",
        ],
        "setup": "",
    },
]
