from money import Money


def test_add():
    assert Money(150, "EUR") + Money(50, "EUR") == Money(200, "EUR")
