"""toolz's @curry: called with too few arguments, the wrapper returns a partial application, and
the definition runs only when that is called."""


class curry:
    def __init__(self, func, *args):
        self.func, self.args = func, args

    def __call__(self, *args):
        args = self.args + args
        if len(args) < self.func.__code__.co_argcount:
            return curry(self.func, *args)
        return self.func(*args)


@curry
def scaled_sum(factor, n):
    return factor * sum(range(n + 1))
