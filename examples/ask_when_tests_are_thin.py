"""One test is not enough: three retrieved versions pass it, and the gate asks which is right.

An agent asked for "the sum of every window of k consecutive numbers" and wrote one test. Three
near-identical candidates (what a retriever returns for such a query: the original and two
copy-paste variants) all pass it, so verification alone cannot pick. The gate runs them on more
inputs in the Docker sandbox, finds one on which they disagree, and returns a question with a
ready-to-paste test per answer. The example answers it the way the agent's user would (the
expected behaviour is "an empty list has no windows"), adds that test, and gates again: now only
the correct version verifies.

Runs offline. Needs the sandbox image (``scripts/docker-up``)::

    .venv/bin/python examples/ask_when_tests_are_thin.py
"""

from __future__ import annotations

from guardrail import Gate, Spec
from guardrail.gate import Candidate, GateResult

ORIGINAL = """
def window_sums(values, k):
    if k <= 0:
        raise ValueError("k must be positive")
    return [sum(values[i:i + k]) for i in range(len(values) - k + 1)]
"""
LAX_CHECK = ORIGINAL.replace("if k <= 0:", "if k < 0:")
NO_CHECK = ORIGINAL.replace('if k <= 0:\n        raise ValueError("k must be positive")\n    ', "")

CANDIDATES = [
    Candidate(code=LAX_CHECK, id="legacy/window_sums", score=0.93),
    Candidate(code=ORIGINAL, id="stats/window_sums", score=0.92),
    Candidate(code=NO_CHECK, id="vendored/window_sums", score=0.91),
]
TESTS = ["assert window_sums([1, 2, 3], 2) == [3, 5]"]
RIGHT = "stats/window_sums"  # what the user knows: the behaviour they want is this version's


def show(title: str, result: GateResult) -> None:
    print(title)
    for item in result.kept:
        print(f"  {item.candidate.id}: {item.verdict.status}")


def main() -> None:
    tests = list(TESTS)
    with Gate() as gate:
        result = gate.gate(CANDIDATES, Spec.from_tests(tests))
        show(f"with {len(tests)} test:", result)
        while result.question is not None and len(tests) < 4:
            print(result.question.render())
            # The user answers with the behaviour they want (here: the original's).
            (right,) = [a for a in result.question.answers if RIGHT in a.candidate_ids]
            if right.test is None:
                print("the right answer has no ready-made test")
                return
            print(f"the user adds: {right.test}")
            tests.append(right.test)
            result = gate.gate(CANDIDATES, Spec.from_tests(tests))
            show(f"with {len(tests)} tests:", result)
        verified = [item.candidate.id for item in result.kept if item.verdict.verified]
        print(f"use: {verified[0] if len(verified) == 1 else 'ask again: ' + ', '.join(verified)}")


if __name__ == "__main__":
    main()
