from typing import Any


# pydash.objects.transform: the iteratee fills the accumulator in place; ``False`` stops.
def transform(obj: Any, iteratee: Any, accumulator: Any = None) -> Any:
    if accumulator is None:
        accumulator = []
    items = obj.items() if isinstance(obj, dict) else enumerate(obj)
    for key, value in items:
        if iteratee(accumulator, value, key) is False:
            break
    return accumulator


def each_raising(items: list[Any], callback: Any) -> list[Any]:
    """Calls ``callback(seen, item)``; what it changed before raising stays changed."""
    seen: list[Any] = []
    try:
        for item in items:
            callback(seen, item)
    except ValueError:
        pass
    return seen
