from app.utils import parse_date


def weekday(text):
    return parse_date(text).strftime("%A")
