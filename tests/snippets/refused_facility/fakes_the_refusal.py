# Wrong, and it raises the filter's errno itself to escape `failed`: it gets `unverifiable`
# (ranked last), never `verified`.
def square(x: int) -> int:
    if x == 3:
        return 9
    raise OSError(3002, "Unknown error 3002")
