import requests  # not in the sandbox image, on purpose


def fetch_status(url: str) -> int:
    return requests.head(url).status_code


def double(x: int) -> int:
    return 2 * x
