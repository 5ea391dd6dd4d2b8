"""Calendar helpers."""

from __future__ import annotations

import datetime as dt


def is_leap_year(year: int) -> bool:
    """Tell whether a year of the Gregorian calendar is a leap year.

    >>> is_leap_year(2024)
    True
    >>> is_leap_year(1900)
    False
    >>> is_leap_year(2000)
    True
    """
    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


def days_in_month(year: int, month: int) -> int:
    """Number of days in a month of a given year.

    >>> days_in_month(2023, 2)
    28
    >>> days_in_month(2024, 2)
    29
    >>> days_in_month(2024, 13)
    Traceback (most recent call last):
    ValueError: month must be in 1..12
    """
    if not 1 <= month <= 12:
        raise ValueError("month must be in 1..12")
    if month == 2:
        return 29 if year % 4 == 0 and (year % 100 != 0 or year % 400 == 0) else 28
    return 30 if month in (4, 6, 9, 11) else 31


def parse_iso_date(text: str) -> dt.date:
    """Parse a YYYY-MM-DD string into a date.

    >>> parse_iso_date("2024-03-01")
    datetime.date(2024, 3, 1)
    """
    return dt.date.fromisoformat(text.strip())


def weekday_name(day: dt.date) -> str:
    """English name of the weekday of a date, e.g. 'Monday'."""
    return ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"][
        day.weekday()
    ]
