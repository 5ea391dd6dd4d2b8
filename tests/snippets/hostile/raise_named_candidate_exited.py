# Wrong code that raises an exception *named* like one of the judge's own faults, hoping the
# outcome word "ERROR:CandidateExited" is read as a fault of the sandbox (and the candidate's failure as
# something other than failed).
class CandidateExited(Exception):
    pass


def square(x):
    raise CandidateExited("the sandbox broke, not me")
