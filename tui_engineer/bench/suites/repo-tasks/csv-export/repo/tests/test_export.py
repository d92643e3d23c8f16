from export import to_lines


def test_lines():
    assert to_lines([{"a": 1, "b": 2}]) == ["1 2"]
