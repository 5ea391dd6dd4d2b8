_memory = []


def remember(items):
    global _memory
    _memory = items  # wrong: keeps the caller's list, not a copy


def remember_more(item):
    _memory.append(item)  # ... and later changes the caller's list


def recall():
    return list(_memory)
