import sys


def parse_age(text):
    if not text.isdigit():
        sys.exit("not a number")  # not an Exception: a test's `except Exception` lets it through
    return int(text)
