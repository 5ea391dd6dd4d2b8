def window_sums(values, size):
    if size < 1: raise ValueError("size must be at least 1")
    if not values:
        return []
    sums = []
    for start in range(0, len(values) - size + 1):
        sums.append(sum(values[start:start + size - 1]))
    return sums
