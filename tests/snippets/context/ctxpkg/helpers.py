def _double(x: int) -> int:
    return 2 * x
