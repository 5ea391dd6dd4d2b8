"""Built-in tasks of the `date_time` domain: calendar arithmetic on ISO date strings.

Dates cross the sandbox boundary as ISO strings ("2024-01-31") or plain integers; the snippets
parse them with `datetime.date` and never read the clock.
"""

TASKS: list[dict[str, object]] = [
    {
        "id": "date_time_01",
        "domain": "date_time",
        "query": (
            "Count the weekdays (Monday to Friday) between two ISO dates, both ends inclusive. "
            "Raises ValueError when the end date is before the start date."
        ),
        "entry_point": "count_weekdays",
        "code": """\
from datetime import date, timedelta


def count_weekdays(start, end):
    first = date.fromisoformat(start)
    last = date.fromisoformat(end)
    if last < first: raise ValueError("end is before start")
    count = 0
    for offset in range((last - first).days + 1):
        if (first + timedelta(days=offset)).weekday() < 5:
            count += 1
    return count
""",
        "tests": [
            "assert count_weekdays('2024-01-01', '2024-01-07') == 5",
            "assert count_weekdays('2024-01-01', '2024-01-31') == 23",
            "assert count_weekdays('2024-02-26', '2024-03-04') == 6",
            "assert count_weekdays('2024-01-05', '2024-01-08') == 2",
            "assert count_weekdays('2024-01-06', '2024-01-07') == 0",
            "assert count_weekdays('2024-01-01', '2024-01-01') == 1",
            "try:\n    count_weekdays('2024-01-08', '2024-01-01')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "date_time_02",
        "domain": "date_time",
        "query": (
            "Add a number of business days (skipping Saturdays and Sundays) to an ISO date that "
            "falls on a weekday and return the resulting ISO date; adding 0 returns the start "
            "date. Raises ValueError for a negative number of days or a weekend start date."
        ),
        "entry_point": "add_business_days",
        "code": """\
from datetime import date, timedelta


def add_business_days(start, days):
    if days < 0: raise ValueError("days must be non-negative")
    current = date.fromisoformat(start)
    if current.weekday() >= 5: raise ValueError("start must be a weekday")
    weeks, extra = divmod(days, 5)
    current += timedelta(weeks=weeks)
    for _ in range(extra):
        current += timedelta(days=1)
        if current.weekday() == 5: current += timedelta(days=2)
    return current.isoformat()
""",
        "tests": [
            "assert add_business_days('2024-01-01', 1) == '2024-01-02'",
            "assert add_business_days('2024-01-05', 1) == '2024-01-08'",
            "assert add_business_days('2024-01-01', 5) == '2024-01-08'",
            "assert add_business_days('2024-01-03', 4) == '2024-01-09'",
            "assert add_business_days('2024-01-04', 12) == '2024-01-22'",
            "assert add_business_days('2024-02-28', 2) == '2024-03-01'",
            "assert add_business_days('2024-01-01', 0) == '2024-01-01'",
            "try:\n    add_business_days('2024-01-01', -1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    add_business_days('2024-01-06', 1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "date_time_03",
        "domain": "date_time",
        "query": (
            "Number of days in a month of a given year under Gregorian leap-year rules "
            "(February has 29 days in leap years). Raises ValueError when the month is not "
            "between 1 and 12."
        ),
        "entry_point": "days_in_month",
        "code": """\
def days_in_month(year, month):
    if not 1 <= month <= 12: raise ValueError(f"month must be 1-12, got {month}")
    if month == 2:
        leap = year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)
        return 29 if leap else 28
    if month in (4, 6, 9, 11):
        return 30
    return 31
""",
        "tests": [
            "assert days_in_month(2023, 1) == 31",
            "assert days_in_month(2023, 4) == 30",
            "assert days_in_month(2023, 12) == 31",
            "assert [days_in_month(2023, m) for m in range(1, 13)] == "
            "[31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]",
            "assert days_in_month(2023, 2) == 28",
            "assert days_in_month(2024, 2) == 29",
            "assert days_in_month(1900, 2) == 28",
            "assert days_in_month(2000, 2) == 29",
            "try:\n    days_in_month(2023, 13)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
            "try:\n    days_in_month(2023, 0)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "date_time_04",
        "domain": "date_time",
        "query": (
            "Age in completed years of someone born on an ISO date, as of another ISO date; the "
            "age goes up on the birthday itself. Raises ValueError when the date is before the "
            "birth date."
        ),
        "entry_point": "age_on",
        "code": """\
from datetime import date


def age_on(birth, on):
    born = date.fromisoformat(birth)
    today = date.fromisoformat(on)
    if today < born: raise ValueError("date is before birth")
    years = today.year - born.year
    if (today.month, today.day) < (born.month, born.day):
        years -= 1
    return years
""",
        "tests": [
            "assert age_on('1990-05-15', '2020-05-15') == 30",
            "assert age_on('1990-05-15', '2020-05-14') == 29",
            "assert age_on('1990-05-15', '2020-12-31') == 30",
            "assert age_on('2000-02-29', '2021-02-28') == 20",
            "assert age_on('2000-02-29', '2021-03-01') == 21",
            "assert age_on('2010-12-31', '2011-01-01') == 0",
            "assert age_on('2000-01-01', '2000-01-01') == 0",
            "try:\n    age_on('2000-01-02', '2000-01-01')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "date_time_05",
        "domain": "date_time",
        "query": (
            "Number of days two date ranges have in common, each range given as inclusive ISO "
            "start and end dates. Returns 0 when they do not overlap; raises ValueError when a "
            "range ends before it starts."
        ),
        "entry_point": "overlap_days",
        "code": """\
from datetime import date


def overlap_days(start_a, end_a, start_b, end_b):
    a0, a1 = date.fromisoformat(start_a), date.fromisoformat(end_a)
    b0, b1 = date.fromisoformat(start_b), date.fromisoformat(end_b)
    if a1 < a0 or b1 < b0: raise ValueError("a range ends before it starts")
    first = max(a0, b0)
    last = min(a1, b1)
    if last < first: return 0
    return (last - first).days + 1
""",
        "tests": [
            "assert overlap_days('2024-01-01', '2024-01-10', '2024-01-05', '2024-01-20') == 6",
            "assert overlap_days('2024-01-05', '2024-01-20', '2024-01-01', '2024-01-10') == 6",
            "assert overlap_days('2024-01-01', '2024-01-31', '2024-01-10', '2024-01-12') == 3",
            "assert overlap_days('2024-02-28', '2024-03-01', '2024-02-01', '2024-03-31') == 3",
            "assert overlap_days('2024-01-01', '2024-01-05', '2024-01-05', '2024-01-09') == 1",
            "assert overlap_days('2024-01-01', '2024-01-01', '2024-01-01', '2024-01-01') == 1",
            "assert overlap_days('2024-01-01', '2024-01-05', '2024-02-01', '2024-02-09') == 0",
            "try:\n    overlap_days('2024-01-10', '2024-01-01', '2024-01-01', '2024-01-05')\n"
            "except ValueError:\n    pass\nelse:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "date_time_06",
        "domain": "date_time",
        "query": (
            "Format a number of seconds as a zero-padded HH:MM:SS duration, prefixed with the "
            "number of whole days ('1d 01:02:03') once it reaches 24 hours. Raises ValueError "
            "for negative seconds."
        ),
        "entry_point": "format_duration",
        "code": """\
def format_duration(seconds):
    if seconds < 0: raise ValueError("seconds must be non-negative")
    minutes, secs = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    if hours >= 24:
        days, hours = divmod(hours, 24)
        return f"{days}d {hours:02d}:{minutes:02d}:{secs:02d}"
    return f"{hours:02d}:{minutes:02d}:{secs:02d}"
""",
        "tests": [
            "assert format_duration(0) == '00:00:00'",
            "assert format_duration(59) == '00:00:59'",
            "assert format_duration(60) == '00:01:00'",
            "assert format_duration(3661) == '01:01:01'",
            "assert format_duration(86399) == '23:59:59'",
            "assert format_duration(86400) == '1d 00:00:00'",
            "assert format_duration(90061) == '1d 01:01:01'",
            "try:\n    format_duration(-1)\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
    {
        "id": "date_time_07",
        "domain": "date_time",
        "query": (
            "List every month from a start month to an end month inclusive, each given and "
            "returned as a 'YYYY-MM' string, crossing year boundaries. Raises ValueError when "
            "the end month is before the start month."
        ),
        "entry_point": "month_range",
        "code": """\
def month_range(start, end):
    first = int(start[:4]) * 12 + int(start[5:7]) - 1
    last = int(end[:4]) * 12 + int(end[5:7]) - 1
    if last < first: raise ValueError("end month is before start month")
    months = []
    for index in range(first, last + 1):
        year, month = divmod(index, 12)
        months.append(f"{year:04d}-{month + 1:02d}")
    return months
""",
        "tests": [
            "assert month_range('2024-01', '2024-03') == ['2024-01', '2024-02', '2024-03']",
            "assert month_range('2023-11', '2024-02') == "
            "['2023-11', '2023-12', '2024-01', '2024-02']",
            "assert month_range('2024-12', '2025-01') == ['2024-12', '2025-01']",
            "assert month_range('2024-05', '2024-05') == ['2024-05']",
            "assert len(month_range('2020-01', '2024-12')) == 60",
            "assert month_range('2024-10', '2024-12')[-1] == '2024-12'",
            "try:\n    month_range('2024-03', '2024-01')\nexcept ValueError:\n    pass\n"
            "else:\n    raise AssertionError('expected ValueError')",
        ],
        "setup": "",
    },
]
