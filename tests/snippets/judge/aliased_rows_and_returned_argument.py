def make_grid(rows, cols):
    # the classic bug: every row is the same list
    return [[0] * cols] * rows


def copy_list(xs):
    # wrong: returns the argument itself, not a copy
    return xs
