import pytest

from inventory import Inventory


def test_cannot_go_negative():
    inv = Inventory()
    inv.add("pear", 2)
    with pytest.raises(ValueError):
        inv.remove("pear", 5)
    assert inv.stock["pear"] == 2


def test_unknown_item():
    with pytest.raises(ValueError):
        Inventory().remove("kiwi", 1)
