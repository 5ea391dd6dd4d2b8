# Wrong code that raises exceptions *named* like the judge's own fault classes (``Fault``, the
# judge's private ``_Fault``, the greeting's ``MissingEntryPoint``), hoping one is taken for a
# fault of the sandbox rather than the candidate's failure.
class Fault(Exception):
    pass


class _Fault(Fault):
    pass


class MissingEntryPoint(Exception):
    pass


def square(x):
    if x == 3:
        raise Fault("the sandbox broke, not me")
    if x == 7919:
        raise _Fault("the sandbox broke, not me")
    raise MissingEntryPoint("the sandbox broke, not me")
