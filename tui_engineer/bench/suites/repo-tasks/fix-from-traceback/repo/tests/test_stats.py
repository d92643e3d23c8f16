from stats import mean, spread


def test_mean():
    assert mean([1, 2, 3]) == 2


def test_spread():
    assert spread([4, 1, 9]) == 8
