def take(stack, n):
    # wrong: pops as it goes, so a failing call has already emptied the stack
    return [stack.pop() for _ in range(n)]
