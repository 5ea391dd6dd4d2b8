"""The real-code benchmark of issue 8: guardrail's verdicts against the libraries' own doctests.

`sdists` fetches pinned sdists, `groundtruth` runs the stdlib doctest runner on the real imported
modules inside a container, `mutants` makes single-line mutants of the functions whose doctests
pass, `queries` holds realistic agent queries with tests, `results` does the arithmetic and the
table. ``bench/bench_realcode.py`` runs it all.
"""
