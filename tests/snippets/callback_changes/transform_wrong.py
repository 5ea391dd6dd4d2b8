from typing import Any


# Wrong: it hands the iteratee a fresh accumulator each time, so nothing accumulates.
def transform(obj: Any, iteratee: Any, accumulator: Any = None) -> Any:
    if accumulator is None:
        accumulator = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for key, value in items:
        if iteratee(type(accumulator)(accumulator), value, key) is False:
            break
    return accumulator


def each_raising(items: list[Any], callback: Any) -> list[Any]:
    seen: list[Any] = []
    try:
        for item in items:
            callback(list(seen), item)
    except ValueError:
        pass
    return seen
