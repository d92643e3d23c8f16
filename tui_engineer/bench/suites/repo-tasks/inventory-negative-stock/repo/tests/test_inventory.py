from inventory import Inventory


def test_add_remove():
    inv = Inventory()
    inv.add("apple", 3)
    inv.remove("apple", 1)
    assert inv.stock["apple"] == 2
