# Wrong code that raises an exception *named* like one of the judge's own faults, hoping the
# outcome word "ERROR:TIMEOUT" is read as a fault of the sandbox (and the candidate's failure as
# something other than failed).
class TIMEOUT(Exception):
    pass


def square(x):
    raise TIMEOUT("the sandbox broke, not me")
