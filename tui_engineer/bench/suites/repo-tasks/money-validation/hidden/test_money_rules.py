import pytest

from money import Money


def test_negative():
    with pytest.raises(ValueError):
        Money(-1, "EUR")


def test_unknown_currency():
    with pytest.raises(ValueError):
        Money(1, "XYZ")


def test_mixed_currencies():
    with pytest.raises(ValueError):
        Money(1, "EUR") + Money(1, "USD")


def test_ok():
    assert (Money(1, "GBP") + Money(2, "GBP")).amount == 3
