def square(x):
    """Square a number: the correct code an earlier job sends, long enough (over 512 bytes) that
    its text is kept by the C allocator rather than Python's small-object pools, so a process that
    once held it keeps the bytes in freed memory.

    NEIGHBOUR-CODE-MARKER: a thief scans its own memory for this word and runs what surrounds it.

    Padding so the request is well over the small-object limit: lorem ipsum dolor sit amet,
    consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna
    aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex
    ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse cillum.
    """
    return x * x


# END-OF-NEIGHBOUR
