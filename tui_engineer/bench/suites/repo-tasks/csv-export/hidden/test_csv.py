import csv
import io

from export import to_csv


def test_round_trip():
    rows = [{"name": "Smith, Jo", "quote": 'say "hi"', "n": 3}, {"name": "Li", "quote": "", "n": 4}]
    text = to_csv(rows)
    assert text.splitlines()[0] == "name,quote,n"
    back = list(csv.DictReader(io.StringIO(text)))
    assert back[0] == {"name": "Smith, Jo", "quote": 'say "hi"', "n": "3"}
    assert len(back) == 2
