from app.dates import parse_date


def weekday(text):
    return parse_date(text).strftime("%A")
