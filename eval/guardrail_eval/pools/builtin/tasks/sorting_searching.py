"""Built-in tasks of the `sorting_searching` domain: sorting, merging and searching sequences."""

TASKS: list[dict[str, object]] = [
    {
        "id": "sorting_searching_01",
        "domain": "sorting_searching",
        "query": (
            "Binary search in a sorted list: return the index of the target value, or -1 when "
            "it is absent. Returns -1 for an empty list and for targets outside the range of "
            "the list without searching."
        ),
        "entry_point": "binary_search",
        "code": """\
def binary_search(items, target):
    if not items: return -1
    if target < items[0] or target > items[-1]: return -1
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if items[mid] == target: return mid
        if items[mid] < target:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
""",
        "tests": [
            "assert binary_search([1, 3, 5, 7, 9], 7) == 3",
            "assert binary_search([1, 3, 5, 7, 9], 1) == 0",
            "assert binary_search([1, 3, 5, 7, 9], 3) == 1",
            "assert binary_search(list(range(0, 100, 2)), 42) == 21",
            "assert binary_search([1, 3, 5, 7, 9], 9) == 4",
            "assert binary_search([1, 3, 5, 7, 9], 4) == -1",
            "assert binary_search([1, 3, 5, 7, 9], 10) == -1",
            "assert binary_search([1, 3, 5, 7, 9], 0) == -1",
            "assert binary_search([], 3) == -1",
            "assert binary_search([4], 4) == 0",
            "assert binary_search([2, 4], 4) == 1",
        ],
        "setup": "",
    },
    {
        "id": "sorting_searching_02",
        "domain": "sorting_searching",
        "query": (
            "Insertion sort that sorts a list in place in ascending order and returns None. "
            "Equal elements keep their relative order; lists of zero or one element are left "
            "unchanged."
        ),
        "entry_point": "insertion_sort",
        "code": """\
def insertion_sort(items):
    if len(items) < 2: return
    for i in range(1, len(items)):
        key = items[i]
        j = i - 1
        while j >= 0 and items[j] > key:
            items[j + 1] = items[j]
            j -= 1
        items[j + 1] = key
""",
        "tests": [
            "xs = [3, 1, 2]\nassert insertion_sort(xs) is None\nassert xs == [1, 2, 3]",
            "xs = [5, 4, 3, 2, 1]\ninsertion_sort(xs)\nassert xs == [1, 2, 3, 4, 5]",
            "xs = [1, 2, 3, 4]\ninsertion_sort(xs)\nassert xs == [1, 2, 3, 4]",
            "xs = []\ninsertion_sort(xs)\nassert xs == []",
            "xs = [7]\ninsertion_sort(xs)\nassert xs == [7]",
            "xs = [2, 1]\ninsertion_sort(xs)\nassert xs == [1, 2]",
            "xs = [3, -1, 3, 0, -1]\ninsertion_sort(xs)\nassert xs == [-1, -1, 0, 3, 3]",
            "xs = [(2, 'a'), (1, 'b'), (2, 'c'), (1, 'd')]\ninsertion_sort(xs)\n"
            "assert xs == [(1, 'b'), (1, 'd'), (2, 'a'), (2, 'c')]",
            "xs = [2, 1.0, 1, 0]\ninsertion_sort(xs)\nassert repr(xs) == '[0, 1.0, 1, 2]'",
        ],
        "setup": "",
    },
    {
        "id": "sorting_searching_03",
        "domain": "sorting_searching",
        "query": (
            "Find the first and last index of a target integer in a sorted list of integers "
            "using binary search, returned as a tuple (first, last); returns (-1, -1) when the "
            "target does not occur, including for an empty list."
        ),
        "entry_point": "find_range",
        "code": """\
def find_range(items, target):
    def first_at_least(value):
        lo, hi = 0, len(items)
        while lo < hi:
            mid = (lo + hi) // 2
            if items[mid] < value:
                lo = mid + 1
            else:
                hi = mid
        return lo
    start = first_at_least(target)
    if start == len(items) or items[start] != target: return (-1, -1)
    end = first_at_least(target + 1) - 1
    return (start, end)
""",
        "tests": [
            "assert find_range([1, 2, 2, 2, 3], 2) == (1, 3)",
            "assert find_range([7, 7, 7], 7) == (0, 2)",
            "assert find_range([5], 5) == (0, 0)",
            "assert find_range([1, 2, 3], 1) == (0, 0)",
            "assert find_range([1, 2, 3], 3) == (2, 2)",
            "assert find_range([1, 3, 5], 2) == (-1, -1)",
            "assert find_range([1, 2, 3], 4) == (-1, -1)",
            "assert find_range([1, 2, 3], 0) == (-1, -1)",
            "assert find_range([], 1) == (-1, -1)",
        ],
        "setup": "",
    },
    {
        "id": "sorting_searching_04",
        "domain": "sorting_searching",
        "query": (
            "Return the k most frequent elements of a list, most frequent first, breaking ties "
            "by the smaller element. Returns an empty list when k is zero or negative, and all "
            "distinct elements when k exceeds their number."
        ),
        "entry_point": "top_k_frequent",
        "code": """\
def top_k_frequent(items, k):
    if k <= 0: return []
    counts = {}
    for item in items:
        counts[item] = counts.get(item, 0) + 1
    ranked = sorted(counts, key=lambda item: (-counts[item], item))
    return ranked[:k]
""",
        "tests": [
            "assert top_k_frequent([1, 1, 1, 2, 2, 3], 2) == [1, 2]",
            "assert top_k_frequent([1, 1, 1, 2, 2, 3], 1) == [1]",
            "assert top_k_frequent([4, 4, 5, 5, 6], 2) == [4, 5]",
            "assert top_k_frequent([3, 1, 2], 3) == [1, 2, 3]",
            "assert top_k_frequent([3, 3, 1], 10) == [3, 1]",
            "assert top_k_frequent([1, 2, 3], 0) == []",
            "assert top_k_frequent([1, 2, 3], -1) == []",
            "assert top_k_frequent([], 2) == []",
            "assert top_k_frequent(['b', 'a', 'b', 'c', 'a', 'b'], 2) == ['b', 'a']",
        ],
        "setup": "",
    },
    {
        "id": "sorting_searching_05",
        "domain": "sorting_searching",
        "query": (
            "Merge overlapping intervals given as (start, end) pairs in any order and return "
            "the merged intervals sorted by start as a list of tuples. Intervals that only "
            "touch, such as (1, 2) and (2, 3), are merged; an empty list gives an empty list."
        ),
        "entry_point": "merge_intervals",
        "code": """\
def merge_intervals(intervals):
    if not intervals: return []
    ordered = sorted(intervals)
    merged = [list(ordered[0])]
    for start, end in ordered[1:]:
        if start <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], end)
        else:
            merged.append([start, end])
    return [tuple(pair) for pair in merged]
""",
        "tests": [
            "assert merge_intervals([(1, 3), (2, 6), (8, 10)]) == [(1, 6), (8, 10)]",
            "assert merge_intervals([(8, 10), (1, 3), (2, 6)]) == [(1, 6), (8, 10)]",
            "assert merge_intervals([(1, 2), (2, 3)]) == [(1, 3)]",
            "assert merge_intervals([(1, 2), (3, 4)]) == [(1, 2), (3, 4)]",
            "assert merge_intervals([(1, 10), (2, 3), (4, 5)]) == [(1, 10)]",
            "assert merge_intervals([(5, 7)]) == [(5, 7)]",
            "assert merge_intervals([(1, 2), (4, 5), (5, 7), (6, 9)]) == [(1, 2), (4, 9)]",
            "assert merge_intervals([]) == []",
            "assert merge_intervals([(0, 0), (0, 0)]) == [(0, 0)]",
        ],
        "setup": "",
    },
    {
        "id": "sorting_searching_06",
        "domain": "sorting_searching",
        "query": (
            "Search a sorted list of distinct integers that has been rotated at an unknown "
            "pivot (e.g. 4 5 6 0 1 2) for a target in logarithmic time, returning its index or "
            "-1 when it is absent or the list is empty."
        ),
        "entry_point": "search_rotated",
        "code": """\
def search_rotated(items, target):
    if not items: return -1
    lo, hi = 0, len(items) - 1
    while lo <= hi:
        mid = (lo + hi) // 2
        if items[mid] == target: return mid
        if items[lo] <= items[mid]:
            if items[lo] <= target < items[mid]:
                hi = mid - 1
            else:
                lo = mid + 1
        elif items[mid] < target <= items[hi]:
            lo = mid + 1
        else:
            hi = mid - 1
    return -1
""",
        "tests": [
            "assert search_rotated([4, 5, 6, 7, 0, 1, 2], 0) == 4",
            "assert search_rotated([4, 5, 6, 7, 0, 1, 2], 4) == 0",
            "assert search_rotated([4, 5, 6, 7, 0, 1, 2], 2) == 6",
            "assert search_rotated([4, 5, 6, 7, 0, 1, 2], 7) == 3",
            "assert search_rotated([4, 5, 6, 7, 0, 1, 2], 3) == -1",
            "assert search_rotated([6, 7, 1, 2, 3, 4, 5], 6) == 0",
            "assert search_rotated([1, 2, 3, 4, 5], 5) == 4",
            "assert search_rotated([3, 1], 1) == 1",
            "assert search_rotated([1], 0) == -1",
            "assert search_rotated([], 1) == -1",
            "assert all(search_rotated(ROTATED, x) == i for i, x in enumerate(ROTATED))",
            "assert all(search_rotated(ROTATED, x) == -1 for x in range(-1, 52, 2))",
        ],
        "setup": "ROTATED = list(range(30, 50, 2)) + list(range(0, 30, 2))",
    },
    {
        "id": "sorting_searching_07",
        "domain": "sorting_searching",
        "query": (
            "Counting sort for non-negative integers no larger than max_value: return a new "
            "ascending list. Raises ValueError when a value is negative or greater than "
            "max_value."
        ),
        "entry_point": "counting_sort",
        "code": """\
def counting_sort(values, max_value):
    counts = [0] * (max_value + 1)
    for value in values:
        if value < 0 or value > max_value: raise ValueError(f"value {value} out of range")
        counts[value] += 1
    result = []
    for value, count in enumerate(counts):
        result.extend([value] * count)
    return result
""",
        "tests": [
            "assert counting_sort([3, 1, 2, 1], 3) == [1, 1, 2, 3]",
            "assert counting_sort([0, 5, 0], 5) == [0, 0, 5]",
            "assert counting_sort([2, 2, 2], 2) == [2, 2, 2]",
            "assert counting_sort([4], 9) == [4]",
            "assert counting_sort([], 4) == []",
            "assert counting_sort([9, 0, 7, 3], 9) == [0, 3, 7, 9]",
            "try:\n    counting_sort([1, 6], 5)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    counting_sort([2, -1], 5)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
]
