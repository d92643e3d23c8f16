from text import slugify


def test_slugs():
    assert slugify("Hello, World!") == "hello-world"
    assert slugify("  Many   spaces -- here ") == "many-spaces-here"
    assert slugify("Ünïcode café") == "unicode-cafe"
