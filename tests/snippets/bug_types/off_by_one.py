def window_sums(values, size):
    if size < 1: raise ValueError("size must be at least 1")
    if not values:
        return []
    sums = []
    for start in range(0, len(values) - size):
        sums.append(sum(values[start:start + size]))
    return sums
