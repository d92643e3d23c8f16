from files import listing


def test_listing_sorted():
    assert listing(["b", "a"]) == ["a", "b"]
