from typing import Any


def register(f: Any) -> Any:
    f.registered = True
    return f


def mark(**attributes: Any) -> Any:
    def decorate(f: Any) -> Any:
        for name, value in attributes.items():
            setattr(f, name, value)
        return f

    return decorate


def is_registered(f: Any) -> bool:
    return getattr(f, "registered", False) is True
