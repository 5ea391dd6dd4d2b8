def window_sums(values, size):
    if not values:
        return []
    sums = []
    for start in range(0, len(values) - size + 1):
        sums.append(sum(values[start:start + size]))
    return sums
