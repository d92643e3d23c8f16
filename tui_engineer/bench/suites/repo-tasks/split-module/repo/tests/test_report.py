from app.report import weekday


def test_weekday():
    assert weekday("2024-01-01") == "Monday"
