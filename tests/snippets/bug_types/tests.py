assert window_sums([1, 2, 3, 4], 2) == [3, 5, 7]
assert window_sums([1, 2, 3], 1) == [1, 2, 3]
assert window_sums([1, 2, 3], 3) == [6]
assert window_sums([], 2) == []
assert window_sums([5], 2) == []
try:
    window_sums([1], 0)
except ValueError:
    pass
else:
    raise AssertionError("size 0 must raise ValueError")
