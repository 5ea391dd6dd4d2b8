"""Built-in tasks of the `data_transformation` domain: reshaping, scaling and paging records."""

TASKS: list[dict[str, object]] = [
    {
        "id": "data_transformation_01",
        "domain": "data_transformation",
        "query": (
            "Flatten a nested dict into a single-level dict whose keys are the nested keys "
            "joined with a separator ('.' by default); empty nested dicts and non-dict values "
            "are kept as values. Raises ValueError for an empty separator."
        ),
        "entry_point": "flatten_dict",
        "code": """\
def flatten_dict(nested, sep="."):
    if not sep: raise ValueError("separator must not be empty")
    flat = {}
    for key, value in nested.items():
        if isinstance(value, dict) and value:
            for sub_key, sub_value in flatten_dict(value, sep).items():
                flat[f"{key}{sep}{sub_key}"] = sub_value
        else:
            flat[key] = value
    return flat
""",
        "tests": [
            "assert flatten_dict({'a': 1, 'b': {'c': 2, 'd': {'e': 3}}}) == "
            "{'a': 1, 'b.c': 2, 'b.d.e': 3}",
            "assert flatten_dict({'a': {'b': 1}}, '/') == {'a/b': 1}",
            "assert flatten_dict({'k': {'v': None}}, '_') == {'k_v': None}",
            "assert flatten_dict({'x': {}}) == {'x': {}}",
            "assert flatten_dict({'a': [1, 2]}) == {'a': [1, 2]}",
            "assert flatten_dict({}) == {}",
            "try:\n    flatten_dict({'a': 1}, '')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "data_transformation_02",
        "domain": "data_transformation",
        "query": (
            "Transpose a matrix given as a list of rows, turning rows into columns. Returns an "
            "empty list for an empty matrix and raises ValueError when the rows have different "
            "lengths."
        ),
        "entry_point": "transpose",
        "code": """\
def transpose(matrix):
    if not matrix: return []
    width = len(matrix[0])
    for row in matrix:
        if len(row) != width: raise ValueError("rows must all have the same length")
    return [[row[col] for row in matrix] for col in range(width)]
""",
        "tests": [
            "assert transpose([[1, 2, 3], [4, 5, 6]]) == [[1, 4], [2, 5], [3, 6]]",
            "assert transpose([[1, 2], [3, 4]]) == [[1, 3], [2, 4]]",
            "assert transpose([[1], [2], [3]]) == [[1, 2, 3]]",
            "assert transpose([[7]]) == [[7]]",
            "assert transpose([[], []]) == []",
            "assert transpose([]) == []",
            "try:\n    transpose([[1, 2], [3]])\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "data_transformation_03",
        "domain": "data_transformation",
        "query": (
            "Min-max normalize a list of numbers to the range 0.0 to 1.0, keeping their order. "
            "Returns an empty list for empty input and all zeros when every value is equal."
        ),
        "entry_point": "min_max_normalize",
        "code": """\
def min_max_normalize(values):
    if not values: return []
    low = min(values)
    high = max(values)
    if high == low: return [0.0 for _ in values]
    span = high - low
    return [(value - low) / span for value in values]
""",
        "tests": [
            "assert min_max_normalize([1, 2, 3]) == [0.0, 0.5, 1.0]",
            "assert min_max_normalize([10, 0, 5]) == [1.0, 0.0, 0.5]",
            "assert min_max_normalize([2, 6, 3, 4]) == [0.0, 1.0, 0.25, 0.5]",
            "assert [round(x, 6) for x in min_max_normalize([-1, 0, 2])] == [0.0, 0.333333, 1.0]",
            "assert min_max_normalize([4, 4, 4]) == [0.0, 0.0, 0.0]",
            "assert min_max_normalize([7]) == [0.0]",
            "assert min_max_normalize([]) == []",
        ],
        "setup": "",
    },
    {
        "id": "data_transformation_04",
        "domain": "data_transformation",
        "query": (
            "Simple moving average: the mean of every full window of consecutive values, in "
            "order. Returns an empty list when the window is longer than the data; raises "
            "ValueError when the window is less than 1."
        ),
        "entry_point": "moving_average",
        "code": """\
def moving_average(values, window):
    if window < 1: raise ValueError("window must be at least 1")
    averages = []
    for start in range(len(values) - window + 1):
        chunk = values[start:start + window]
        averages.append(sum(chunk) / window)
    return averages
""",
        "tests": [
            "assert moving_average([1, 2, 3, 4, 5], 2) == [1.5, 2.5, 3.5, 4.5]",
            "assert moving_average([0, 3, 6, 9], 3) == [3.0, 6.0]",
            "assert moving_average([1, 2, 3, 4, 5], 5) == [3.0]",
            "assert moving_average([2, 4, 6], 1) == [2.0, 4.0, 6.0]",
            "assert moving_average([1, 2, 3], 4) == []",
            "assert moving_average([], 1) == []",
            "try:\n    moving_average([1, 2], 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "data_transformation_05",
        "domain": "data_transformation",
        "query": (
            "Convert a list of record dicts (rows) into a dict of columns: each key maps to the "
            "list of its values across records, in first-seen key order, with a fill value "
            "(None by default) where a record lacks the key. Raises TypeError when a record is "
            "not a dict."
        ),
        "entry_point": "records_to_columns",
        "code": """\
def records_to_columns(records, fill=None):
    names = []
    for record in records:
        if not isinstance(record, dict): raise TypeError(f"record is not a dict: {record!r}")
        for name in record:
            if name not in names:
                names.append(name)
    return {name: [record.get(name, fill) for record in records] for name in names}
""",
        "tests": [
            "assert records_to_columns([{'a': 1, 'b': 2}, {'a': 3, 'b': 4}]) == "
            "{'a': [1, 3], 'b': [2, 4]}",
            "assert records_to_columns([{'a': 1}, {'b': 2}]) == {'a': [1, None], 'b': [None, 2]}",
            "assert records_to_columns([{'a': 1}, {'b': 2}], 0) == {'a': [1, 0], 'b': [0, 2]}",
            "assert list(records_to_columns([{'y': 1, 'x': 2}, {'z': 3}])) == ['y', 'x', 'z']",
            "assert records_to_columns([{'k': 'v'}]) == {'k': ['v']}",
            "assert records_to_columns([]) == {}",
            "try:\n    records_to_columns([{'a': 1}, [1, 2]])\nexcept TypeError:\n    pass\n"
            "else:\n    raise AssertionError('expected TypeError')",
        ],
        "setup": "",
    },
    {
        "id": "data_transformation_06",
        "domain": "data_transformation",
        "query": (
            "Histogram: count how many values fall in each of `bins` equal-width bins spanning "
            "low to high; a value equal to high goes in the last bin and values outside the "
            "range are ignored. Raises ValueError when bins is less than 1 or high is not "
            "greater than low."
        ),
        "entry_point": "histogram",
        "code": """\
def histogram(values, low, high, bins):
    if bins < 1 or high <= low: raise ValueError("need bins >= 1 and high > low")
    counts = [0] * bins
    width = (high - low) / bins
    for value in values:
        if value < low or value > high: continue
        index = min(int((value - low) / width), bins - 1)
        counts[index] += 1
    return counts
""",
        "tests": [
            "assert histogram([1, 2, 3, 4], 0, 4, 2) == [1, 3]",
            "assert histogram([0, 10], 0, 10, 5) == [1, 0, 0, 0, 1]",
            "assert histogram([-1, 11, 5], 0, 10, 2) == [0, 1]",
            "assert histogram([0.5, 1.5, 2.5], 0, 3, 3) == [1, 1, 1]",
            "assert histogram([5, 6, 7, 8], 4, 8, 2) == [1, 3]",
            "assert histogram([1, 1, 1], 0, 2, 1) == [3]",
            "assert histogram([], 0, 10, 5) == [0, 0, 0, 0, 0]",
            "try:\n    histogram([1], 5, 5, 2)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    histogram([1], 0, 5, 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "data_transformation_07",
        "domain": "data_transformation",
        "query": (
            "Paginate a list: return the items on a 1-based page number for a given page size. "
            "A page past the end is an empty list; raises ValueError when the page number or "
            "the page size is less than 1."
        ),
        "entry_point": "paginate",
        "code": """\
def paginate(items, page, per_page):
    if page < 1: raise ValueError("page numbers start at 1")
    if per_page < 1: raise ValueError("per_page must be at least 1")
    start = (page - 1) * per_page
    end = start + per_page
    return items[start:end]
""",
        "tests": [
            "assert paginate(list(range(10)), 1, 3) == [0, 1, 2]",
            "assert paginate(list(range(10)), 2, 3) == [3, 4, 5]",
            "assert paginate(list(range(10)), 3, 2) == [4, 5]",
            "assert paginate(list(range(10)), 4, 3) == [9]",
            "assert paginate(list(range(10)), 5, 3) == []",
            "assert paginate(['a', 'b'], 1, 2) == ['a', 'b']",
            "assert paginate(['a', 'b', 'c'], 2, 1) == ['b']",
            "assert paginate([], 1, 5) == []",
            "try:\n    paginate([1], 0, 5)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    paginate([1], 1, 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
]
