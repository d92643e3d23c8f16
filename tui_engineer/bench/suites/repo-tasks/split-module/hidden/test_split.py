import inspect

import app.dates
import app.report
import app.utils


def test_parse_date_lives_in_dates():
    assert app.dates.parse_date("2024-02-29").day == 29
    assert app.utils.parse_date is app.dates.parse_date
    assert "from app.dates import parse_date" in inspect.getsource(app.report)
    assert "def parse_date" not in inspect.getsource(app.utils)
