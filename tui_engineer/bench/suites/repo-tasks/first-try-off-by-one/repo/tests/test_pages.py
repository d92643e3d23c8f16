from pages import paginate

ITEMS = list(range(1, 26))


def test_first_page_is_page_one():
    assert paginate(ITEMS, 1, 10) == list(range(1, 11))


def test_last_page_is_short():
    assert paginate(ITEMS, 3, 10) == [21, 22, 23, 24, 25]
