from app.dates import parse_date  # noqa: F401 - old callers import it from here


def clamp(value, low, high):
    return max(low, min(high, value))
