def normalise(xs):
    # wrong: turns the ints into bools in place; True == 1, but the test checks the type
    xs[:] = [bool(v) for v in xs]
