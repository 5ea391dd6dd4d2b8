def window_sums(values, size):
    if size < 1: raise ValueError("size must be at least 1")
    if not values:
        return []
    sums = []
    for start in range(len(values) - size + 1, 0):
        sums.append(sum(values[start:start + size]))
    return sums
