import pytest

from pages import paginate


def test_pages():
    assert paginate(list("abcdefg"), 2, 3) == ["d", "e", "f"]
    assert paginate(list("abc"), 5, 3) == []


def test_bad_page():
    with pytest.raises(ValueError):
        paginate([1], 0, 3)
