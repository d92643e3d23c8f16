from text import slugify


def test_spaces_become_dashes():
    assert slugify("Hello World") == "hello-world"
