from typing import Any


# pydash.objects.clone: a shallow copy shares its values with the original.
def clone(value: Any) -> Any:
    return type(value)(value) if isinstance(value, dict | list) else value


def same(value: Any) -> Any:
    return value


def index_by(records: list[dict[Any, Any]], key: Any) -> dict[Any, Any]:
    index: dict[Any, Any] = {}
    for record in records:
        index.setdefault(record[key], []).append(record)
    return index


def pick(mapping: dict[Any, Any], *, key: Any) -> Any:
    return mapping[key]
