"""Built-in tasks of the `collections` domain: slicing, grouping and counting lists and dicts.

The module is not named ``collections`` so that it cannot shadow the standard library's.
"""

TASKS: list[dict[str, object]] = [
    {
        "id": "collections_01",
        "domain": "collections",
        "query": (
            "Split a list into consecutive chunks of a given size; the last chunk may be shorter. "
            "Returns an empty list for empty input and raises ValueError when the size is less "
            "than 1."
        ),
        "entry_point": "chunk",
        "code": """\
def chunk(items, size):
    if size < 1: raise ValueError("size must be at least 1")
    chunks = []
    for start in range(0, len(items), size):
        chunks.append(items[start:start + size])
    return chunks
""",
        "tests": [
            "assert chunk([1, 2, 3, 4, 5], 2) == [[1, 2], [3, 4], [5]]",
            "assert chunk([1, 2, 3, 4], 2) == [[1, 2], [3, 4]]",
            "assert chunk([1, 2, 3], 1) == [[1], [2], [3]]",
            "assert chunk([1, 2, 3], 5) == [[1, 2, 3]]",
            "assert chunk(['a', 'b', 'c'], 3) == [['a', 'b', 'c']]",
            "assert chunk([], 3) == []",
            "try:\n    chunk([1, 2, 3], -1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "collections_02",
        "domain": "collections",
        "query": (
            "Rotate a list to the left by k positions and return a new list: k larger than the "
            "length wraps around and a negative k rotates to the right. Returns an empty list "
            "for empty input."
        ),
        "entry_point": "rotate_left",
        "code": """\
def rotate_left(items, k):
    if not items: return []
    shift = k % len(items)
    head = items[:shift]
    tail = items[shift:]
    return tail + head
""",
        "tests": [
            "assert rotate_left([1, 2, 3, 4, 5], 2) == [3, 4, 5, 1, 2]",
            "assert rotate_left([1, 2, 3], 0) == [1, 2, 3]",
            "assert rotate_left([1, 2, 3], 3) == [1, 2, 3]",
            "assert rotate_left([1, 2, 3], 4) == [2, 3, 1]",
            "assert rotate_left([1, 2, 3], -1) == [3, 1, 2]",
            "assert rotate_left(['x'], 7) == ['x']",
            "assert rotate_left([], 5) == []",
        ],
        "setup": "",
    },
    {
        "id": "collections_03",
        "domain": "collections",
        "query": (
            "All contiguous sliding windows of a given size over a list, in order, each as a "
            "list. Returns an empty list when the window is longer than the list; raises "
            "ValueError when the size is less than 1."
        ),
        "entry_point": "sliding_windows",
        "code": """\
def sliding_windows(items, size):
    if size < 1: raise ValueError("size must be at least 1")
    windows = []
    for start in range(len(items) - size + 1):
        windows.append(items[start:start + size])
    return windows
""",
        "tests": [
            "assert sliding_windows([1, 2, 3, 4], 2) == [[1, 2], [2, 3], [3, 4]]",
            "assert sliding_windows([5, 6, 7, 8, 9], 3) == [[5, 6, 7], [6, 7, 8], [7, 8, 9]]",
            "assert sliding_windows([1, 2, 3], 3) == [[1, 2, 3]]",
            "assert sliding_windows([1, 2, 3], 1) == [[1], [2], [3]]",
            "assert sliding_windows([1, 2, 3], 4) == []",
            "assert sliding_windows([], 1) == []",
            "try:\n    sliding_windows([1, 2], 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "collections_04",
        "domain": "collections",
        "query": (
            "Return the n most frequent items of a list, most frequent first, breaking ties by "
            "first appearance. Returns an empty list when n is zero or negative or the list is "
            "empty, and all distinct items when n exceeds their number."
        ),
        "entry_point": "most_common",
        "code": """\
def most_common(items, n):
    if n <= 0: return []
    counts = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    ranked = sorted(counts, key=lambda item: -counts[item])
    return ranked[:n]
""",
        "tests": [
            "assert most_common(['a', 'b', 'a', 'c', 'b', 'a'], 2) == ['a', 'b']",
            "assert most_common([3, 1, 3, 1, 2], 3) == [3, 1, 2]",
            "assert most_common([1, 2, 2], 1) == [2]",
            "assert most_common([5, 5, 6], 10) == [5, 6]",
            "assert most_common([], 3) == []",
            "assert most_common([1, 2, 2], 0) == []",
            "assert most_common([1, 2, 2], -1) == []",
        ],
        "setup": "",
    },
    {
        "id": "collections_05",
        "domain": "collections",
        "query": (
            "Index a list of record dicts by one field: return a dict from the field's value "
            "to the record. Records without the field are skipped; raises ValueError when two "
            "records share the same value."
        ),
        "entry_point": "index_by",
        "code": """\
def index_by(records, field):
    index = {}
    for record in records:
        if field not in record: continue
        key = record[field]
        if key in index: raise ValueError(f"duplicate {field}: {key!r}")
        index[key] = record
    return index
""",
        "tests": [
            "assert index_by([{'id': 1, 'n': 'a'}, {'id': 2, 'n': 'b'}], 'id') == "
            "{1: {'id': 1, 'n': 'a'}, 2: {'id': 2, 'n': 'b'}}",
            "assert index_by([{'id': 1, 'n': 'a'}], 'n') == {'a': {'id': 1, 'n': 'a'}}",
            "assert index_by([{'n': 'a'}, {'id': 3}], 'id') == {3: {'id': 3}}",
            "assert index_by([{'x': 1}], 'id') == {}",
            "assert index_by([], 'id') == {}",
            "assert list(index_by([{'k': 'b'}, {'k': 'a'}], 'k')) == ['b', 'a']",
            "try:\n    index_by([{'id': 1}, {'id': 1}], 'id')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "collections_06",
        "domain": "collections",
        "query": (
            "Run-length encode a list: collapse each run of equal consecutive items into an "
            "(item, count) tuple, in order. Returns an empty list for empty input."
        ),
        "entry_point": "run_lengths",
        "code": """\
def run_lengths(items):
    if not items: return []
    runs = []
    current, count = items[0], 1
    for item in items[1:]:
        if item == current:
            count += 1
        else:
            runs.append((current, count))
            current, count = item, 1
    runs.append((current, count))
    return runs
""",
        "tests": [
            "assert run_lengths([1, 1, 2, 2, 2, 1]) == [(1, 2), (2, 3), (1, 1)]",
            "assert run_lengths(['x', 'x', 'y']) == [('x', 2), ('y', 1)]",
            "assert run_lengths([1, 2, 3]) == [(1, 1), (2, 1), (3, 1)]",
            "assert run_lengths([5, 5, 5]) == [(5, 3)]",
            "assert run_lengths(['a']) == [('a', 1)]",
            "assert run_lengths([]) == []",
        ],
        "setup": "",
    },
    {
        "id": "collections_07",
        "domain": "collections",
        "query": (
            "Interleave two lists element by element, starting with the first list, and append "
            "the leftover tail of the longer one. With strict=True, raises ValueError when the "
            "lists differ in length."
        ),
        "entry_point": "interleave",
        "code": """\
def interleave(first, second, strict=False):
    if strict and len(first) != len(second): raise ValueError("lists differ in length")
    result = []
    shorter = min(len(first), len(second))
    for i in range(shorter):
        result.append(first[i])
        result.append(second[i])
    result.extend(first[shorter:])
    result.extend(second[shorter:])
    return result
""",
        "tests": [
            "assert interleave([1, 2, 3], ['a', 'b', 'c']) == [1, 'a', 2, 'b', 3, 'c']",
            "assert interleave([1, 2, 3, 4], ['a']) == [1, 'a', 2, 3, 4]",
            "assert interleave([1], ['a', 'b', 'c']) == [1, 'a', 'b', 'c']",
            "assert interleave([], [7, 8]) == [7, 8]",
            "assert interleave([], []) == []",
            "assert interleave([1, 2], [3, 4], strict=True) == [1, 3, 2, 4]",
            "try:\n    interleave([1, 2], [3], strict=True)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
]
