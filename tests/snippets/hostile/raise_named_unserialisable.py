# Wrong code that raises an exception *named* like one of the judge's own faults, hoping the
# outcome word "ERROR:Unserialisable" is read as a fault of the sandbox (and the candidate's failure as
# something other than failed).
class Unserialisable(Exception):
    pass


def square(x):
    raise Unserialisable("the sandbox broke, not me")
