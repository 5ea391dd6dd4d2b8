from typing import Any


def register(f: Any) -> Any:
    return f


def mark(**attributes: Any) -> Any:
    def decorate(f: Any) -> Any:
        for name in attributes:
            setattr(f, name, None)
        return f

    return decorate


def is_registered(f: Any) -> bool:
    return getattr(f, "registered", True) is not True
